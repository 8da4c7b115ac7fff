"""The NumPy backend's contract, driven inside a worker.

Contract (Gymnasium VectorEnv conventions, next-step autoreset):
  class VectorEnv(num_envs: int):
      reset(seed=None) -> (obs[B, ...], info)
      step(actions[B]) -> (obs, reward[B], terminated[B], truncated[B], info)
      set_state(states: dict[str, ndarray with leading B])
      get_state() -> dict[str, ndarray with leading B]
  state_from_reference(ref_state: dict[str, ndarray]) -> dict[str, ndarray]   (one env)
  state_to_reference(state: dict[str, ndarray]) -> dict[str, ndarray]   (one env, the inverse)
      without it state reads are not checked and the verdict lists that as a gap.
  set_state copies what it is given (the caller may change its arrays afterwards), and
  get_state returns copies, never the env's own arrays.
  states_from_reference(ref_states: dict[str, ndarray with leading B]) -> dict   (optional)
      the same for B envs at once; when present the harness uses it for batches and checks
      it against state_from_reference on a few rows of every batch.

With next-step autoreset the step that ends an episode returns its terminal observation,
which is what the harness compares (docs/design.md, contract 5).

A stochastic env's VectorEnv also has (docs/design.md, contract 3):
      sample_noise(actions[B]) -> noise[B, ...]      (from the env's own generator)
      step_given_noise(actions[B], noise[B, ...]) -> the outputs of step
where step(actions) == step_given_noise(actions, sample_noise(actions)). Requests that carry
`noise` (recorded from the reference's draws) run step_given_noise; the others run step.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Mapping
from types import ModuleType
from typing import Any

import numpy as np

from envport.targets import state_api
from envport.targets.loader import ContractError, require
from envport.targets.names import TargetName

STOCHASTIC_CONTRACT = ("sample_noise", "step_given_noise")


def _unstack(states: dict[str, np.ndarray]) -> list[dict[str, np.ndarray]]:
    count = len(next(iter(states.values())))
    return [{k: v[i] for k, v in states.items()} for i in range(count)]


STEP_OUTPUTS = ("obs", "reward", "terminated", "truncated")
# A port that cannot load a state at all (envpool) is still verifiable, the other way round.
CANNOT_LOAD = "; a port that cannot load a state verifies with --reverse-injection"


def batch_outputs(answer: Any, count: int) -> tuple:
    """A VectorEnv step's answer, held to the contract's shape: obs, reward, terminated and
    truncated each with one row per env. A scalar would otherwise be broadcast over the batch
    (or crash the comparison) instead of being reported as the port's mistake."""
    if not isinstance(answer, tuple | list) or len(answer) != 5:
        raise ContractError(
            "port `VectorEnv.step` must return (obs, reward, terminated, truncated, info) "
            "(numpy contract)"
        )
    for name, part in zip(STEP_OUTPUTS, answer[:4], strict=True):
        shape = np.shape(part)
        if not shape or shape[0] != count:
            raise ContractError(
                f"port `VectorEnv.step` answered `{name}` shaped {shape} for a batch of {count} "
                f"envs (numpy contract: one row per env)"
            )
    return tuple(answer)


class NumpyPort:
    backend = TargetName.NUMPY.value

    def __init__(self, entry: ModuleType) -> None:
        require(entry, ["VectorEnv"], TargetName.NUMPY)
        for method in ("reset", "step", "set_state", "get_state"):
            if not callable(getattr(entry.VectorEnv, method, None)):
                raise ContractError(
                    f"port `VectorEnv` lacks `{method}` (numpy contract)"
                    + CANNOT_LOAD * (method == "set_state")
                )
        if not callable(getattr(entry, "state_from_reference", None)):
            raise ContractError(
                f"port entry `{entry.__name__}` lacks `state_from_reference` (numpy contract)"
                + CANNOT_LOAD
            )
        self.entry = entry

    def _env(self, states: dict[str, np.ndarray], seed: int = 0) -> Any:
        bridged = self._bridge(states)
        env = self.entry.VectorEnv(num_envs=len(next(iter(bridged.values()))))
        env.reset(seed=seed)
        env.set_state(bridged)
        return env

    def _bridge(self, states: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Reference states for B envs as the port's state batch: through the optional
        batched bridge when the port has one (thousands of per-env calls cost more than the
        steps), held to the per-env bridge on a few rows every time."""
        batched = getattr(self.entry, "states_from_reference", None)
        if not callable(batched):
            per_env = [self.entry.state_from_reference(s) for s in _unstack(states)]
            return {k: np.stack([np.asarray(s[k]) for s in per_env]) for k in per_env[0]}
        # A copy in: a bridge that edits its input in place would fool the row check below.
        out = {
            k: np.asarray(v) for k, v in batched({k: v.copy() for k, v in states.items()}).items()
        }
        count = len(next(iter(states.values())))
        for row in sorted({0, count // 2, count - 1}):
            single = self.entry.state_from_reference({k: v[row] for k, v in states.items()})
            for key, value in single.items():
                if key not in out or not np.array_equal(out[key][row], value, equal_nan=True):
                    raise ContractError(
                        f"`states_from_reference` disagrees with `state_from_reference` on "
                        f"field `{key}` of env {row} (numpy contract: the batched bridge must "
                        "equal the per-env one, env by env)"
                    )
        return out

    def _step(self, env: Any, actions: np.ndarray, noise: np.ndarray | None) -> tuple:
        if noise is None:
            return batch_outputs(env.step(actions), len(actions))
        for method in STOCHASTIC_CONTRACT:
            if not callable(getattr(env, method, None)):
                raise ContractError(
                    f"port `VectorEnv` lacks `{method}` (numpy contract, stochastic env)"
                )
        return batch_outputs(env.step_given_noise(actions, noise), len(actions))

    def rollout(
        self,
        states: dict[str, np.ndarray],
        actions: np.ndarray,
        noise: np.ndarray | None = None,
        pad_to: Any = None,
    ) -> dict[str, Any]:
        del pad_to  # nothing is compiled: any shape runs as it is
        env = self._env(states)
        started = time.perf_counter()
        count, steps = actions.shape[:2]
        outputs: list[np.ndarray] = []
        for t in range(steps):
            step = self._step(env, actions[:, t], None if noise is None else noise[:, t])[:4]
            if not outputs:
                outputs = [
                    np.empty((count, steps, *np.shape(p)[1:]), np.asarray(p).dtype) for p in step
                ]
            # Copied out at once: a vectorised env may reuse its output buffers.
            for out, part in zip(outputs, step, strict=True):
                out[:, t] = part
        run_s = time.perf_counter() - started
        obs, reward, terminated, truncated = outputs
        return {
            "obs": obs,
            "reward": reward,
            "terminated": terminated,
            "truncated": truncated,
            "compile_s": 0.0,
            "run_s": run_s,
        }

    def step_batch(
        self,
        states: dict[str, np.ndarray],
        actions: np.ndarray,
        eager: bool = False,
        noise: np.ndarray | None = None,
        pad_to: Any = None,
        read_state: bool = False,
    ) -> dict[str, Any]:
        del eager, pad_to  # nothing is compiled
        env = self._env(states)
        started = time.perf_counter()
        obs, reward, terminated, truncated, _ = self._step(env, actions, noise)
        answer = {
            "obs": np.asarray(obs),
            "reward": np.asarray(reward),
            "terminated": np.asarray(terminated),
            "truncated": np.asarray(truncated),
            "compile_s": 0.0,
            "run_s": time.perf_counter() - started,
        }
        if read_state:
            answer["state"] = self._read(env)
        return answer

    def sample_noise(
        self, states: dict[str, np.ndarray], actions: np.ndarray, seed: int
    ) -> dict[str, Any]:
        """The port's own noise for B (state, action) pairs: what the distribution test
        compares with the reference's draws."""
        env = self._env(states, seed)
        if not callable(getattr(env, "sample_noise", None)):
            raise ContractError(
                "port `VectorEnv` lacks `sample_noise` (numpy contract, stochastic env)"
            )
        return {"noise": np.asarray(env.sample_noise(actions))}

    def state_api(self, states: dict[str, np.ndarray], actions: np.ndarray) -> dict[str, Any]:
        """The state API's contract: `set_state` keeps none of the caller's arrays and
        `get_state` hands out copies (state_api). The bridge's answer goes to `set_state`,
        which copies it, so the bridge itself may return views."""
        found: list[str] = []
        bridged = self._bridge({k: v.copy() for k, v in states.items()})

        def make() -> Any:
            env = self.entry.VectorEnv(num_envs=len(actions))
            env.reset(seed=0)
            return env

        found += state_api.probe_vector_env(make, bridged, actions)
        return {"problems": found}

    # ---- L2: a live session of B envs, and batch-versus-single ----

    def session_load(self, states: dict[str, np.ndarray]) -> dict[str, Any]:
        """Load states into a live session; answers with the state read back (one trip)."""
        self.session = self._env(states)
        return {"state": self.session_read()}

    def session_step(self, actions: np.ndarray, noise: np.ndarray | None = None) -> dict[str, Any]:
        obs, reward, terminated, truncated, _ = self._step(self.session, actions, noise)
        return {
            "obs": np.array(obs),
            "reward": np.array(reward),
            "terminated": np.array(terminated),
            "truncated": np.array(truncated),
            "state": self.session_read(),
        }

    def session_read(self) -> dict[str, Any] | None:
        return self._read(self.session)

    def _read(self, env: Any) -> dict[str, Any] | None:
        """Every env's state as the reference's fields (None without `state_to_reference`)."""
        to_reference = getattr(self.entry, "state_to_reference", None)
        if to_reference is None:
            return None
        per_env = [to_reference(s) for s in _unstack(env.get_state())]
        return {k: np.stack([np.asarray(s[k]) for s in per_env]) for k in per_env[0]}

    # ---- the paths users call: reset, the sampled step, the VectorEnv's own semantics ----

    def reset_samples(self, count: int, seed: int, chunk: int) -> dict[str, Any]:
        """`count` reset draws, from VectorEnvs of `chunk` envs reset with seeds seed,
        seed + 1, ...; `again` is the first chunk reset a second time with the same seed."""
        obs, states = [], []
        for start in range(0, count, chunk):
            env = self.entry.VectorEnv(num_envs=min(chunk, count - start))
            first, _ = env.reset(seed=seed + start // chunk)
            obs.append(np.array(first))
            states.append(self._read(env))
        again, _ = self.entry.VectorEnv(num_envs=min(chunk, count)).reset(seed=seed)
        # All chunks or none have a state: the port's entry has state_to_reference or not.
        present = [s for s in states if s is not None]
        read = {k: np.concatenate([s[k] for s in present]) for k in present[0]} if present else None
        return {"obs": np.concatenate(obs), "state": read, "again": np.array(again)}

    def sample_step(
        self, states: dict[str, np.ndarray], actions: np.ndarray, seed: int
    ) -> dict[str, Any]:
        """`step` as users call it (the env's own draws), and beside it, from an env in the
        same state with the same seed, step_given_noise(actions, sample_noise(actions))."""
        names = ("obs", "reward", "terminated", "truncated")
        sampled = self._env(states, seed).step(actions)[:4]
        env = self._env(states, seed)
        for method in STOCHASTIC_CONTRACT:
            if not callable(getattr(env, method, None)):
                raise ContractError(
                    f"port `VectorEnv` lacks `{method}` (numpy contract, stochastic env)"
                )
        composed = env.step_given_noise(actions, env.sample_noise(actions))[:4]
        return {
            "step": {k: np.array(v) for k, v in zip(names, sampled, strict=True)},
            "composed": {k: np.array(v) for k, v in zip(names, composed, strict=True)},
        }

    def vector_open(self, num_envs: int) -> dict[str, Any]:
        """A live VectorEnv driven op by op, as Gymnasium's users drive one."""
        self.vector = self.entry.VectorEnv(num_envs=num_envs)
        parameters: Mapping[str, inspect.Parameter]
        try:
            parameters = inspect.signature(self.vector.reset).parameters
        except (TypeError, ValueError):
            parameters = {}
        takes_options = "options" in parameters or any(
            p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()
        )
        return {"reset_options": takes_options}

    def vector_reset(self, seed: int | None = None, mask: Any = None) -> dict[str, Any]:
        if mask is None:
            obs, _ = self.vector.reset(seed=seed)
        else:
            options = {"reset_mask": np.asarray(mask, dtype=bool)}
            obs, _ = self.vector.reset(seed=seed, options=options)
        return {"obs": np.array(obs), "state": self._read(self.vector)}

    def vector_load(self, states: dict[str, np.ndarray]) -> dict[str, Any]:
        self.vector.set_state(self._bridge(states))
        return {"state": self._read(self.vector)}

    def vector_step(self, actions: np.ndarray, noise: np.ndarray | None = None) -> dict[str, Any]:
        obs, reward, terminated, truncated, _ = self._step(self.vector, actions, noise)
        return {
            "obs": np.array(obs),
            "reward": np.array(reward),
            "terminated": np.array(terminated),
            "truncated": np.array(truncated),
            "state": self._read(self.vector),
        }

    def batch_vs_single(
        self, states: dict[str, np.ndarray], actions: np.ndarray, noise: np.ndarray | None = None
    ) -> dict[str, Any]:
        batch = self.rollout(states, actions, noise)
        singles = [
            self.rollout(
                {k: v[i : i + 1] for k, v in states.items()},
                actions[i : i + 1],
                None if noise is None else noise[i : i + 1],
            )
            for i in range(actions.shape[0])
        ]
        names = ("obs", "reward", "terminated", "truncated")
        single = {k: np.concatenate([s[k] for s in singles]) for k in names}
        return {"batch": {k: batch[k] for k in names}, "single": single}
