"""The JAX backend's contract, driven inside a worker.

Contract (gymnax 1.0 functional API, without autoreset so the harness sees terminal steps):
  reset(key, params) -> (obs, state)
  step(key, state, action, params) -> (obs, state, reward, terminated, truncated, info)
  state_from_reference(ref_state: dict[str, Array]) -> state     (must be jax-traceable)
  default_params() -> params                                      (optional; None if absent)
"""

from __future__ import annotations

import time
from types import ModuleType
from typing import Any

import numpy as np

from envport.targets.loader import require

CONTRACT = ["reset", "step", "state_from_reference"]


class JaxPort:
    backend = "jax"

    def __init__(self, entry: ModuleType) -> None:
        import jax

        require(entry, CONTRACT, "jax")
        self.jax = jax
        self.entry = entry
        self.params = entry.default_params() if hasattr(entry, "default_params") else None
        self._compiled: dict[str, Any] = {}

    def _episode(self, ref_state: Any, actions: Any, keys: Any) -> Any:
        state = self.entry.state_from_reference(ref_state)

        def body(carry: Any, inputs: Any) -> Any:
            action, key = inputs
            obs, nxt, reward, terminated, truncated, _ = self.entry.step(
                key, carry, action, self.params
            )
            return nxt, (obs, reward, terminated, truncated)

        _, out = self.jax.lax.scan(body, state, (actions, keys))
        return out

    def _single(self, ref_state: Any, action: Any, key: Any) -> Any:
        state = self.entry.state_from_reference(ref_state)
        obs, _, reward, terminated, truncated, _ = self.entry.step(key, state, action, self.params)
        return obs, reward, terminated, truncated

    def _run(self, name: str, fn: Any, *args: Any) -> dict[str, Any]:
        jax = self.jax
        shapes = (name, *(str(jax.tree_util.tree_map(np.shape, a)) for a in args))
        compile_s = 0.0
        if shapes not in self._compiled:
            started = time.perf_counter()
            self._compiled[shapes] = jax.jit(jax.vmap(fn)).lower(*args).compile()
            compile_s = time.perf_counter() - started
        started = time.perf_counter()
        obs, reward, terminated, truncated = jax.block_until_ready(self._compiled[shapes](*args))
        return {
            "obs": np.asarray(obs),
            "reward": np.asarray(reward),
            "terminated": np.asarray(terminated),
            "truncated": np.asarray(truncated),
            "compile_s": compile_s,
            "run_s": time.perf_counter() - started,
        }

    def _keys(self, *shape: int) -> Any:
        # Deterministic envs ignore the key; stochastic ones get their noise passed explicitly.
        count = int(np.prod(shape))
        keys = self.jax.random.split(self.jax.random.PRNGKey(0), count)
        return keys.reshape(*shape, *keys.shape[1:])

    def rollout(self, states: dict[str, np.ndarray], actions: np.ndarray) -> dict[str, Any]:
        return self._run("rollout", self._episode, states, actions, self._keys(*actions.shape))

    def step_batch(self, states: dict[str, np.ndarray], actions: np.ndarray) -> dict[str, Any]:
        return self._run("step", self._single, states, actions, self._keys(actions.shape[0]))
