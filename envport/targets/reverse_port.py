"""A port driven from its own resets, for reverse injection, inside a worker.

Some ports cannot load a state at all (envpool and other compiled vector envs), so the
harness cannot start them from the reference's states. Reverse injection turns the
direction round: the port resets itself, the harness reads its start state and writes it
into the reference. This side only resets and steps the port and reads what it can:

  NumPy: VectorEnv(num_envs) with reset(seed=...) and step(actions[B]); its state getter,
         when it has one, is VectorEnv.get_state() with the entry's state_to_reference.
  JAX:   reset(key, params) and step(key, state, action, params); its getter is
         state_to_reference.

Without a getter the harness reads the state from the observation, as the spec declares.
A stochastic port that has `step_given_noise` is fed the reference's noise; one without it
samples its own and cannot be compared step by step.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np

from envport.targets.loader import ContractError, require
from envport.targets.numpy_port import batch_outputs
from envport.targets.registry import TargetName, python_target

STEP_OUTPUTS = ("obs", "reward", "terminated", "truncated")


def _unstack(states: dict[str, np.ndarray]) -> list[dict[str, np.ndarray]]:
    count = len(next(iter(states.values())))
    return [{k: v[i] for k, v in states.items()} for i in range(count)]


def _stack(rows: list[dict[str, Any]]) -> dict[str, np.ndarray]:
    return {k: np.stack([np.asarray(r[k]) for r in rows]) for k in rows[0]}


class ReverseNumpyPort:
    backend = TargetName.NUMPY.value

    def __init__(self, entry: ModuleType) -> None:
        require(entry, ["VectorEnv"], TargetName.NUMPY)
        for method in ("reset", "step"):
            if not callable(getattr(entry.VectorEnv, method, None)):
                raise ContractError(f"port `VectorEnv` lacks `{method}` (numpy contract)")
        self.entry = entry
        self.getter = callable(getattr(entry.VectorEnv, "get_state", None)) and callable(
            getattr(entry, "state_to_reference", None)
        )
        self.env: Any = None

    def _read(self) -> dict[str, np.ndarray] | None:
        if not self.getter:
            return None
        return _stack([self.entry.state_to_reference(s) for s in _unstack(self.env.get_state())])

    def reverse_reset(self, num_envs: int, seed: int) -> dict[str, Any]:
        self.env = self.entry.VectorEnv(num_envs=num_envs)
        obs, _ = self.env.reset(seed=seed)
        return {"obs": np.array(obs), "state": self._read()}

    def reverse_rollout(self, actions: np.ndarray, noise: np.ndarray | None = None) -> dict:
        if self.env is None:
            raise ContractError("reverse_rollout before reverse_reset")
        count, steps = actions.shape[:2]
        if noise is not None and not callable(getattr(self.env, "step_given_noise", None)):
            raise ContractError("port `VectorEnv` lacks `step_given_noise` (stochastic env)")
        outputs: list[np.ndarray] = []
        states: list[dict[str, np.ndarray]] = []
        for t in range(steps):
            if noise is None:
                stepped = self.env.step(actions[:, t])
            else:
                stepped = self.env.step_given_noise(actions[:, t], noise[:, t])
            step = batch_outputs(stepped, count)[:4]
            if not outputs:
                outputs = [
                    np.empty((count, steps, *np.shape(p)[1:]), np.asarray(p).dtype) for p in step
                ]
            # Copied out at once: a compiled vector env may reuse its output buffers.
            for out, part in zip(outputs, step, strict=True):
                out[:, t] = part
            read = self._read()
            if read is not None:
                states.append(read)
        answer: dict[str, Any] = dict(zip(STEP_OUTPUTS, outputs, strict=True))
        answer["states"] = (
            {k: np.stack([s[k] for s in states], axis=1) for k in states[0]} if states else None
        )
        return answer


class ReverseJaxPort:
    backend = TargetName.JAX.value

    def __init__(self, entry: ModuleType) -> None:
        import jax

        require(entry, ["reset", "step"], TargetName.JAX)
        self.jax = jax
        self.entry = entry
        self.params = entry.default_params() if hasattr(entry, "default_params") else None
        self.getter = callable(getattr(entry, "state_to_reference", None))
        self.state: Any = None
        self.seed = 0

    def _read(self, state: Any) -> dict[str, np.ndarray] | None:
        if not self.getter:
            return None
        read = self.jax.vmap(self.entry.state_to_reference)(state)
        return {k: np.asarray(v) for k, v in read.items()}

    def reverse_reset(self, num_envs: int, seed: int) -> dict[str, Any]:
        jax = self.jax
        keys = jax.random.split(jax.random.PRNGKey(seed), num_envs)
        obs, self.state = jax.jit(jax.vmap(lambda k: self.entry.reset(k, self.params)))(keys)
        self.seed = seed
        return {"obs": np.asarray(obs), "state": self._read(self.state)}

    def reverse_rollout(self, actions: np.ndarray, noise: np.ndarray | None = None) -> dict:
        if self.state is None:
            raise ContractError("reverse_rollout before reverse_reset")
        jax = self.jax
        noisy = noise is not None
        if noisy:
            require(self.entry, ["step_given_noise"], "jax, stochastic env")
            inputs = noise
        else:
            # Deterministic envs ignore the keys; each (env, step) gets its own anyway.
            count = int(np.prod(actions.shape[:2]))
            keys = jax.random.split(jax.random.PRNGKey(self.seed + 1), count)
            inputs = keys.reshape(*actions.shape[:2], *keys.shape[1:])

        def one(key_or_noise: Any, state: Any, action: Any) -> Any:
            if noisy:
                return self.entry.step_given_noise(key_or_noise, state, action, self.params)
            return self.entry.step(key_or_noise, state, action, self.params)

        def run(state: Any, actions: Any, inputs: Any) -> Any:
            def body(carry: Any, xs: Any) -> Any:
                action, key_or_noise = xs
                obs, nxt, reward, terminated, truncated, _ = jax.vmap(one)(
                    key_or_noise, carry, action
                )
                read = jax.vmap(self.entry.state_to_reference)(nxt) if self.getter else {}
                return nxt, (obs, reward, terminated, truncated, read)

            # Time leads inside the scan; the answer is batch-major like every other.
            swap = jax.tree_util.Partial(jax.numpy.swapaxes, axis1=0, axis2=1)
            _, out = jax.lax.scan(body, state, (swap(actions), swap(inputs)))
            return jax.tree_util.tree_map(swap, out)

        obs, reward, terminated, truncated, read = jax.jit(run)(self.state, actions, inputs)
        answer: dict[str, Any] = {
            name: np.asarray(value)
            for name, value in zip(STEP_OUTPUTS, (obs, reward, terminated, truncated), strict=True)
        }
        answer["states"] = {k: np.asarray(v) for k, v in read.items()} if self.getter else None
        return answer


def reverse_port(entry: ModuleType, target: str) -> ReverseNumpyPort | ReverseJaxPort:
    """The reverse-injection driver for a Python port (a Rust crate always loads states)."""
    if target == "auto":
        target = python_target(entry)
    if target == TargetName.NUMPY:
        return ReverseNumpyPort(entry)
    if target == TargetName.JAX:
        return ReverseJaxPort(entry)
    raise ContractError(f"reverse injection drives NumPy and JAX ports, not target `{target}`")
