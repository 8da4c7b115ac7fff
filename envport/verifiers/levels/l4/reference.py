"""L4 on the reference's side: B reference envs stepped together for the trainers.

Each episode of a row starts with `reset(seed)` for the next seed of its stream, so every
episode gets its own start state and, for a stochastic env, its own random stream. The
envs are made as `envport verify` makes the reference (`gymnasium.make` or the factory).
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
from gymnasium import spaces

from envport.spec import PortSpec
from envport.targets.reference import make_env
from envport.targets.rule_trace import reference_call


class ReferenceBatch:
    def __init__(self, spec: PortSpec, num_envs: int, seeds: Iterator[int]) -> None:
        logging.getLogger("gymnasium").setLevel(logging.ERROR)
        warnings.filterwarnings("ignore", module="gymnasium")
        self.envs = [make_env(spec) for _ in range(num_envs)]
        self.num_envs = num_envs
        self.seeds = seeds
        self.discrete = isinstance(self.envs[0].action_space, spaces.Discrete)
        self.ended = np.ones(num_envs, dtype=bool)
        self.last: list[Any] = [None] * num_envs

    def restart(self, rows: np.ndarray) -> np.ndarray:
        found = []
        for row in rows:
            with reference_call():
                obs, _ = self.envs[row].reset(seed=next(self.seeds))
            self.ended[row] = False
            self.last[row] = np.asarray(obs)
            found.append(self.last[row])
        return np.stack(found)

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        reward = np.zeros(self.num_envs)
        terminated = np.zeros(self.num_envs, dtype=bool)
        truncated = np.zeros(self.num_envs, dtype=bool)
        for row, env in enumerate(self.envs):
            if self.ended[row]:
                # A Gymnasium env must not be stepped past its end; the row's answer is
                # ignored by the caller until it restarts.
                terminated[row] = True
                continue
            action = int(actions[row]) if self.discrete else np.asarray(actions[row])
            with reference_call():
                obs, r, te, tr, _ = env.step(action)
            self.last[row] = np.asarray(obs)
            reward[row], terminated[row], truncated[row] = float(r), bool(te), bool(tr)
            self.ended[row] = bool(te or tr)
        return np.stack(self.last), reward, terminated, truncated
