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

    def step_batch(
        self, states: dict[str, np.ndarray], actions: np.ndarray, eager: bool = False
    ) -> dict[str, Any]:
        del eager  # nothing is compiled
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

    # ---- L2: a live session of B envs, and batch-versus-single ----

    def session_load(self, states: dict[str, np.ndarray]) -> dict[str, Any]:
        """Load states into a live session; answers with the state read back (one trip)."""
        self.session = self._env(states)
        return {"state": self.session_read()}

    def session_step(self, actions: np.ndarray) -> dict[str, Any]:
        obs, reward, terminated, truncated, _ = self.session.step(actions)
        return {
            "obs": np.array(obs),
            "reward": np.array(reward),
            "terminated": np.array(terminated),
            "truncated": np.array(truncated),
            "state": self.session_read(),
        }

    def session_read(self) -> dict[str, Any] | None:
        to_reference = getattr(self.entry, "state_to_reference", None)
        if to_reference is None:
            return None
        per_env = [to_reference(s) for s in _unstack(self.session.get_state())]
        return {k: np.stack([np.asarray(s[k]) for s in per_env]) for k in per_env[0]}

    def batch_vs_single(self, states: dict[str, np.ndarray], actions: np.ndarray) -> dict[str, Any]:
        batch = self.rollout(states, actions)
        singles = [
            self.rollout({k: v[i : i + 1] for k, v in states.items()}, actions[i : i + 1])
            for i in range(actions.shape[0])
        ]
        names = ("obs", "reward", "terminated", "truncated")
        single = {k: np.concatenate([s[k] for s in singles]) for k in names}
        return {"batch": {k: batch[k] for k in names}, "single": single}
