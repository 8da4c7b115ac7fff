"""The JAX backend's contract, driven inside a worker.

Contract (gymnax 1.0 functional API, without autoreset so the harness sees terminal steps):
  reset(key, params) -> (obs, state)
  step(key, state, action, params) -> (obs, state, reward, terminated, truncated, info)
  state_from_reference(ref_state: dict[str, Array]) -> state     (must be jax-traceable)
  state_to_reference(state) -> dict[str, Array]                   (the inverse; jax-traceable)
      every field `state_from_reference` takes, so the harness can read the port's state
      back; without it state reads are not checked and the verdict lists that as a gap.
      Neither keeps the caller's arrays: a later change to them must not reach the state.
  default_params() -> params                                      (optional; None if absent)
A stochastic env's port also exports (docs/design.md, contract 3):
  sample_noise(key, state, action, params) -> noise
  step_given_noise(noise, state, action, params) -> the outputs of step
where step(key, ...) == step_given_noise(sample_noise(key, ...), ...). Requests that carry
`noise` (recorded from the reference's draws) run step_given_noise; the others run step.
"""

from __future__ import annotations

import time
from types import ModuleType
from typing import Any

import numpy as np

from envport.targets import state_api
from envport.targets.jax_batches import STEP_BUCKET, chunked, pad_rows
from envport.targets.loader import ContractError, require
from envport.targets.names import TargetName
from envport.targets.numpy_port import CANNOT_LOAD

STOCHASTIC_CONTRACT = ["sample_noise", "step_given_noise"]


class JaxPort:
    backend = TargetName.JAX.value

    def __init__(self, entry: ModuleType) -> None:
        import jax

        require(entry, ["reset", "step"], TargetName.JAX)
        if not callable(getattr(entry, "state_from_reference", None)):
            raise ContractError(
                f"port entry `{entry.__name__}` lacks `state_from_reference` (jax contract)"
                + CANNOT_LOAD
            )
        self.jax = jax
        self.entry = entry
        self.params = entry.default_params() if hasattr(entry, "default_params") else None
        self._compiled: dict[tuple[Any, ...], Any] = {}
        self._key_programs: dict[tuple[int, ...], Any] = {}

    def _keys(self, seed: int, shape: tuple[int, ...]) -> np.ndarray:
        """Keys split from PRNGKey(seed), one per entry of `shape`, as NumPy: one compiled
        program per shape, held for the run. Split eagerly, the seed, the split (threefry,
        unrolled: about 0.3 s) and the reshape compile apiece, and each row taken from a
        JAX array compiles a slice; these are the same keys."""
        if shape not in self._key_programs:
            random = self.jax.random
            count = int(np.prod(shape))

            def split(seed: Any) -> Any:
                keys = random.split(random.PRNGKey(seed), count)
                return keys.reshape(*shape, *keys.shape[1:])

            self._key_programs[shape] = self.jax.jit(split)
        return np.asarray(self._key_programs[shape](seed))

    def _step(self, key_or_noise: Any, state: Any, action: Any, noisy: bool) -> Any:
        if noisy:
            require(self.entry, STOCHASTIC_CONTRACT, "jax, stochastic env")
            return self.entry.step_given_noise(key_or_noise, state, action, self.params)
        return self.entry.step(key_or_noise, state, action, self.params)

    def _episode(self, ref_state: Any, actions: Any, inputs: Any, noisy: bool = False) -> Any:
        state = self.entry.state_from_reference(ref_state)

        def body(carry: Any, xs: Any) -> Any:
            action, key_or_noise = xs
            obs, nxt, reward, terminated, truncated, _ = self._step(
                key_or_noise, carry, action, noisy
            )
            return nxt, (obs, reward, terminated, truncated)

        _, out = self.jax.lax.scan(body, state, (actions, inputs))
        return out

    def _single(self, ref_state: Any, action: Any, key_or_noise: Any, noisy: bool = False) -> Any:
        state = self.entry.state_from_reference(ref_state)
        obs, _, reward, terminated, truncated, _ = self._step(key_or_noise, state, action, noisy)
        return obs, reward, terminated, truncated

    def _single_read(
        self, ref_state: Any, action: Any, key_or_noise: Any, noisy: bool = False
    ) -> Any:
        """`_single` and the state it leaves, read back as the reference's fields."""
        state = self.entry.state_from_reference(ref_state)
        obs, nxt, reward, terminated, truncated, _ = self._step(key_or_noise, state, action, noisy)
        return obs, reward, terminated, truncated, self.entry.state_to_reference(nxt)

    def _batched(self, fn: Any, lead: int) -> Any:
        """fn vmapped over the batch; `lead` leading axes of `actions` are batch and time."""
        jax = self.jax

        def run(states: Any, actions: Any, noise: Any = None) -> Any:
            if noise is not None:
                return jax.vmap(lambda s, a, n: fn(s, a, n, True))(states, actions, noise)
            # Deterministic envs ignore the key; a stochastic env without recorded noise
            # draws its own from these.
            shape = actions.shape[:lead]
            keys = jax.random.split(jax.random.PRNGKey(0), int(np.prod(shape)))
            keys = keys.reshape(*shape, *keys.shape[1:])
            return jax.vmap(fn)(states, actions, keys)

        return run

    def _run(
        self,
        name: str,
        fn: Any,
        states: Any,
        actions: np.ndarray,
        noise: np.ndarray | None = None,
        pad_to: list[int] | None = None,
    ) -> dict[str, Any]:
        jax = self.jax
        real = actions.shape[: len(pad_to)] if pad_to else None
        if pad_to:
            # Chunks of L3 arrive in varying shapes; padded (repeating the last row) to the
            # run's shape they share one compiled function instead of compiling each.
            states, actions, noise = pad_rows(states, actions, noise, pad_to)
        # Shapes and dtypes: a compiled program takes only the inputs it was compiled for.
        signature = (
            name,
            actions.shape,
            actions.dtype.str,
            None if noise is None else (noise.shape, noise.dtype.str),
            tuple((k, v.shape, np.asarray(v).dtype.str) for k, v in sorted(states.items())),
        )
        compile_s = 0.0
        if signature not in self._compiled:
            started = time.perf_counter()
            batched = self._batched(fn, 2 if name == "rollout" else 1)
            self._compiled[signature] = jax.jit(batched).lower(states, actions, noise).compile()
            compile_s = time.perf_counter() - started
        started = time.perf_counter()
        outputs = jax.block_until_ready(self._compiled[signature](states, actions, noise))
        cut = tuple(slice(0, n) for n in real) if real else ()
        obs, reward, terminated, truncated = (np.asarray(o)[cut] for o in outputs[:4])
        answer = {
            "obs": obs,
            "reward": reward,
            "terminated": terminated,
            "truncated": truncated,
            "compile_s": compile_s,
            "run_s": time.perf_counter() - started,
        }
        if len(outputs) > 4:  # the state after the step (`_single_read`)
            answer["state"] = {k: np.asarray(v)[cut] for k, v in outputs[4].items()}
        return answer

    def rollout(
        self,
        states: dict[str, np.ndarray],
        actions: np.ndarray,
        noise: np.ndarray | None = None,
        pad_to: list[int] | None = None,
    ) -> dict[str, Any]:
        return self._run("rollout", self._episode, states, actions, noise, pad_to)

    def step_batch(
        self,
        states: dict[str, np.ndarray],
        actions: np.ndarray,
        eager: bool = False,
        noise: np.ndarray | None = None,
        pad_to: list[int] | None = None,
        read_state: bool = False,
    ) -> dict[str, Any]:
        if eager:
            return self._eager_steps(states, actions, noise)
        if read_state and not hasattr(self.entry, "state_to_reference"):
            return {**self.step_batch(states, actions, noise=noise, pad_to=pad_to), "state": None}
        name, fn = ("step_read", self._single_read) if read_state else ("step", self._single)
        if pad_to is not None:
            return self._run(name, fn, states, actions, noise, pad_to)
        # L1's batches (its drawn examples, its landing rows, a game's endings) and L3's
        # resync chunks come in sizes of their own: run in rows of one shared bucket, so one
        # compiled step serves them all (a compile costs seconds, a bucket's run
        # milliseconds).
        return chunked(
            lambda s, a, n: self._run(name, fn, s, a, n, [STEP_BUCKET]),
            states,
            actions,
            noise,
        )

    def _eager_steps(
        self, states: dict[str, np.ndarray], actions: np.ndarray, noise: np.ndarray | None
    ) -> dict[str, Any]:
        """The same step without jit, row by row: L1 checks that compiling does not change
        answers. Un-jitted, each primitive is compiled for its shapes on first use; one row
        at a time, the step meets the shapes the probes' eager calls already compiled (a
        vmapped batch would compile every primitive again, about a second for CartPole), and
        the keys are split compiled (threefry un-jitted is thousands of primitives)."""
        jax = self.jax
        noisy = noise is not None
        inputs: Any = noise
        if inputs is None:
            inputs = self._keys(0, actions.shape[:1])
        rows = []
        with jax.disable_jit():
            for index in range(actions.shape[0]):
                state = {k: v[index] for k, v in states.items()}
                rows.append(self._single(state, actions[index], inputs[index], noisy))
        obs, reward, terminated, truncated = (
            np.stack([np.asarray(row[j]) for row in rows]) for j in range(4)
        )
        return {"obs": obs, "reward": reward, "terminated": terminated, "truncated": truncated}

    def sample_noise(
        self, states: dict[str, np.ndarray], actions: np.ndarray, seed: int
    ) -> dict[str, Any]:
        """The port's own noise for B (state, action) pairs: what the distribution test
        compares with the reference's draws."""
        require(self.entry, STOCHASTIC_CONTRACT, "jax, stochastic env")
        jax = self.jax
        if not hasattr(self, "_sampler"):

            def sample(ref_state: Any, action: Any, key: Any) -> Any:
                state = self.entry.state_from_reference(ref_state)
                return self.entry.sample_noise(key, state, action, self.params)

            self._sampler = jax.jit(jax.vmap(sample))
        keys = self._keys(seed, actions.shape[:1])
        return {"noise": np.asarray(self._sampler(states, actions, keys))}

    def state_api(self, states: dict[str, np.ndarray], actions: np.ndarray) -> dict[str, Any]:
        """The state API's contract: `state_from_reference` keeps none of the caller's
        arrays (a JAX state's arrays are immutable once they are JAX's own)."""
        del actions  # a JAX step returns a new state: nothing of the caller's to write into
        leaves = self.jax.tree_util.tree_leaves
        found = state_api.probe_bridge(
            self.entry.state_from_reference, states, "state_from_reference", leaves
        )
        return {"problems": found}

    # ---- the paths users call: reset and the sampled step ----

    def reset_samples(self, count: int, seed: int, chunk: int = 0) -> dict[str, Any]:
        """`count` reset draws over keys split from PRNGKey(seed), and their states as the
        reference's fields (None without `state_to_reference`)."""
        del chunk  # one vmapped call: keys are independent by construction
        jax = self.jax
        if not hasattr(self, "_resetter"):
            read = getattr(self.entry, "state_to_reference", None)

            def one(key: Any) -> Any:
                obs, state = self.entry.reset(key, self.params)
                return obs, None if read is None else read(state)

            self._resetter = jax.jit(jax.vmap(one))
        obs, states = self._resetter(self._keys(seed, (count,)))
        return {
            "obs": np.asarray(obs),
            "state": None if states is None else {k: np.asarray(v) for k, v in states.items()},
        }

    def sample_step(
        self, states: dict[str, np.ndarray], actions: np.ndarray, seed: int
    ) -> dict[str, Any]:
        """step(key, ...) for B (state, action) pairs, one key each, as users call it; and
        step_given_noise(sample_noise(key, ...), ...) with the same keys, which the contract
        says it equals."""
        require(self.entry, STOCHASTIC_CONTRACT, "jax, stochastic env")
        jax = self.jax
        if not hasattr(self, "_sampled_step"):

            def both(ref_state: Any, action: Any, key: Any) -> Any:
                state = self.entry.state_from_reference(ref_state)
                obs, _, reward, terminated, truncated, _ = self.entry.step(
                    key, state, action, self.params
                )
                noise = self.entry.sample_noise(key, state, action, self.params)
                composed = self.entry.step_given_noise(noise, state, action, self.params)
                return (obs, reward, terminated, truncated), (*composed[:1], *composed[2:5])

            self._sampled_step = jax.jit(jax.vmap(both))
        keys = self._keys(seed, actions.shape[:1])
        sampled, composed = self._sampled_step(states, actions, keys)
        names = ("obs", "reward", "terminated", "truncated")
        return {
            "step": {k: np.asarray(v) for k, v in zip(names, sampled, strict=True)},
            "composed": {k: np.asarray(v) for k, v in zip(names, composed, strict=True)},
        }

    # ---- L2: a live session of B envs, and batch-versus-single ----

    def _session_fns(self) -> Any:
        if not hasattr(self, "_session_jit"):
            jax = self.jax
            key = jax.random.PRNGKey(0)

            def step(states: Any, actions: Any, noise: Any = None) -> Any:
                noisy = noise is not None
                inputs = noise if noisy else jax.random.split(key, actions.shape[0])
                obs, nxt, reward, terminated, truncated, _ = jax.vmap(
                    lambda s, a, k: self._step(k, s, a, noisy)
                )(states, actions, inputs)
                return nxt, (obs, reward, terminated, truncated)

            self._session_jit = (
                jax.jit(jax.vmap(self.entry.state_from_reference)),
                jax.jit(step),
                jax.jit(jax.vmap(self.entry.state_to_reference))
                if hasattr(self.entry, "state_to_reference")
                else None,
            )
        return self._session_jit

    def session_load(self, states: dict[str, np.ndarray]) -> dict[str, Any]:
        """Load states into a live session; answers with the state read back (one trip)."""
        self.session = self._session_fns()[0](states)
        return {"state": self.session_read()}

    def session_step(self, actions: np.ndarray, noise: np.ndarray | None = None) -> dict[str, Any]:
        self.session, outputs = self._session_fns()[1](self.session, actions, noise)
        obs, reward, terminated, truncated = (np.asarray(o) for o in outputs)
        return {
            "obs": obs,
            "reward": reward,
            "terminated": terminated,
            "truncated": truncated,
            "state": self.session_read(),
        }

    def session_read(self) -> dict[str, Any] | None:
        read = self._session_fns()[2]
        if read is None:
            return None
        return {k: np.asarray(v) for k, v in read(self.session).items()}

    def batch_vs_single(
        self, states: dict[str, np.ndarray], actions: np.ndarray, noise: np.ndarray | None = None
    ) -> dict[str, Any]:
        batch = self.rollout(states, actions, noise)
        jax = self.jax
        noisy = noise is not None
        if not hasattr(self, "_episode_jit"):
            # Compiled once for the run: L2 asks for several batch sizes, each env alone.
            self._episode_jit = jax.jit(self._episode, static_argnums=3)
        episode = self._episode_jit
        inputs = noise if noise is not None else self._keys(0, actions.shape[:2])
        singles = [
            episode({k: v[i] for k, v in states.items()}, actions[i], inputs[i], noisy)
            for i in range(actions.shape[0])
        ]
        single = {
            name: np.stack([np.asarray(s[j]) for s in singles])
            for j, name in enumerate(("obs", "reward", "terminated", "truncated"))
        }
        return {"batch": {k: batch[k] for k in single}, "single": single}
