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

    def _batched(self, fn: Any) -> Any:
        jax = self.jax

        def run(states: Any, actions: Any) -> Any:
            # Deterministic envs ignore the key; stochastic ones get noise passed explicitly.
            keys = jax.random.split(jax.random.PRNGKey(0), actions.size)
            keys = keys.reshape(*actions.shape, *keys.shape[1:])
            return jax.vmap(fn)(states, actions, keys)

        return run

    def _run(self, name: str, fn: Any, states: Any, actions: np.ndarray) -> dict[str, Any]:
        jax = self.jax
        signature = (name, actions.shape, tuple((k, v.shape) for k, v in sorted(states.items())))
        compile_s = 0.0
        if signature not in self._compiled:
            started = time.perf_counter()
            self._compiled[signature] = jax.jit(self._batched(fn)).lower(states, actions).compile()
            compile_s = time.perf_counter() - started
        started = time.perf_counter()
        outputs = jax.block_until_ready(self._compiled[signature](states, actions))
        obs, reward, terminated, truncated = (np.asarray(o) for o in outputs)
        return {
            "obs": obs,
            "reward": reward,
            "terminated": terminated,
            "truncated": truncated,
            "compile_s": compile_s,
            "run_s": time.perf_counter() - started,
        }

    def rollout(self, states: dict[str, np.ndarray], actions: np.ndarray) -> dict[str, Any]:
        return self._run("rollout", self._episode, states, actions)

    def step_batch(self, states: dict[str, np.ndarray], actions: np.ndarray) -> dict[str, Any]:
        return self._run("step", self._single, states, actions)
