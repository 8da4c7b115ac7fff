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

A stochastic env's VectorEnv also has (DESIGN.md, contract 3):
      sample_noise(actions[B]) -> noise[B, ...]      (from the env's own generator)
      step_given_noise(actions[B], noise[B, ...]) -> the outputs of step
where step(actions) == step_given_noise(actions, sample_noise(actions)). Requests that carry
`noise` (recorded from the reference's draws) run step_given_noise; the others run step.
"""

from __future__ import annotations

import time
from types import ModuleType
from typing import Any

import numpy as np

from envport.targets.loader import ContractError, require

STOCHASTIC_CONTRACT = ("sample_noise", "step_given_noise")


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

    def _env(self, states: dict[str, np.ndarray], seed: int = 0) -> Any:
        per_env = [self.entry.state_from_reference(s) for s in _unstack(states)]
        env = self.entry.VectorEnv(num_envs=len(per_env))
        env.reset(seed=seed)
        env.set_state({k: np.stack([s[k] for s in per_env]) for k in per_env[0]})
        return env

    def _step(self, env: Any, actions: np.ndarray, noise: np.ndarray | None) -> tuple:
        if noise is None:
            return env.step(actions)
        for method in STOCHASTIC_CONTRACT:
            if not callable(getattr(env, method, None)):
                raise ContractError(
                    f"port `VectorEnv` lacks `{method}` (numpy contract, stochastic env)"
                )
        return env.step_given_noise(actions, noise)

    def rollout(
        self, states: dict[str, np.ndarray], actions: np.ndarray, noise: np.ndarray | None = None
    ) -> dict[str, Any]:
        env = self._env(states)
        started = time.perf_counter()
        # Copies: a vectorised env may reuse its output buffers from step to step.
        steps = [
            tuple(
                np.array(part)
                for part in self._step(env, actions[:, t], None if noise is None else noise[:, t])[
                    :4
                ]
            )
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
        self,
        states: dict[str, np.ndarray],
        actions: np.ndarray,
        eager: bool = False,
        noise: np.ndarray | None = None,
    ) -> dict[str, Any]:
        del eager  # nothing is compiled
        env = self._env(states)
        started = time.perf_counter()
        obs, reward, terminated, truncated, _ = self._step(env, actions, noise)
        return {
            "obs": np.asarray(obs),
            "reward": np.asarray(reward),
            "terminated": np.asarray(terminated),
            "truncated": np.asarray(truncated),
            "compile_s": 0.0,
            "run_s": time.perf_counter() - started,
        }

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
        to_reference = getattr(self.entry, "state_to_reference", None)
        if to_reference is None:
            return None
        per_env = [to_reference(s) for s in _unstack(self.session.get_state())]
        return {k: np.stack([np.asarray(s[k]) for s in per_env]) for k in per_env[0]}

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
