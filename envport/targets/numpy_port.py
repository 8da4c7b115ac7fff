"""The NumPy backend's contract, driven inside a worker.

Contract (Gymnasium VectorEnv conventions, next-step autoreset):
  class VectorEnv(num_envs: int):
      reset(seed=None) -> (obs[B, ...], info)
      step(actions[B]) -> (obs, reward[B], terminated[B], truncated[B], info)
      set_state(states: dict[str, ndarray with leading B])
      get_state() -> dict[str, ndarray with leading B]
  state_from_reference(ref_state: dict[str, ndarray]) -> dict[str, ndarray]   (one env)

With next-step autoreset the step that ends an episode returns its terminal observation,
which is what the harness compares (DESIGN.md, contract 5).
"""

from __future__ import annotations

import time
from types import ModuleType
from typing import Any

import numpy as np

from envport.targets.loader import ContractError, require


def _unstack(states: dict[str, np.ndarray]) -> list[dict[str, np.ndarray]]:
    count = len(next(iter(states.values())))
    return [{k: v[i] for k, v in states.items()} for i in range(count)]


class NumpyPort:
    backend = "numpy"

    def __init__(self, entry: ModuleType) -> None:
        require(entry, ["VectorEnv", "state_from_reference"], "numpy")
        for method in ("reset", "step", "set_state", "get_state"):
            if not callable(getattr(entry.VectorEnv, method, None)):
                raise ContractError(f"port `VectorEnv` lacks `{method}` (numpy contract)")
        self.entry = entry

    def _env(self, states: dict[str, np.ndarray]) -> Any:
        per_env = [self.entry.state_from_reference(s) for s in _unstack(states)]
        env = self.entry.VectorEnv(num_envs=len(per_env))
        env.reset(seed=0)
        env.set_state({k: np.stack([s[k] for s in per_env]) for k in per_env[0]})
        return env

    def rollout(self, states: dict[str, np.ndarray], actions: np.ndarray) -> dict[str, Any]:
        env = self._env(states)
        started = time.perf_counter()
        # Copies: a vectorised env may reuse its output buffers from step to step.
        steps = [
            tuple(np.array(part) for part in env.step(actions[:, t])[:4])
            for t in range(actions.shape[1])
        ]
        run_s = time.perf_counter() - started
        obs, reward, terminated, truncated = (
            np.stack(part, axis=1) for part in zip(*steps, strict=True)
        )
        return {
            "obs": obs,
            "reward": reward,
            "terminated": terminated,
            "truncated": truncated,
            "compile_s": 0.0,
            "run_s": run_s,
        }

    def step_batch(self, states: dict[str, np.ndarray], actions: np.ndarray) -> dict[str, Any]:
        env = self._env(states)
        started = time.perf_counter()
        obs, reward, terminated, truncated, _ = env.step(actions)
        return {
            "obs": np.asarray(obs),
            "reward": np.asarray(reward),
            "terminated": np.asarray(terminated),
            "truncated": np.asarray(truncated),
            "compile_s": 0.0,
            "run_s": time.perf_counter() - started,
        }
