"""A test reference whose one rule lives deep in play: clearing the last brick refills the
wall (as Breakout does), which neither independent state draws (2^-12) nor random play from
a reset (three misses end the game) reach, and exploration from reached states does."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

BRICKS = 12


class BricksEnv(gym.Env[np.ndarray, int]):
    def __init__(self, hard: bool = False) -> None:
        self.hard = hard
        self.action_space = spaces.Discrete(BRICKS)
        self.observation_space = spaces.Box(0, 3, (BRICKS + 1,), dtype=np.int64)
        self.bricks = np.ones(BRICKS, dtype=np.int64)
        self.lives = 3

    def _obs(self) -> np.ndarray:
        return np.concatenate([self.bricks, [self.lives]]).astype(np.int64)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        super().reset(seed=seed)
        self.bricks = np.ones(BRICKS, dtype=np.int64)
        self.lives = 3
        return self._obs(), {}

    def step(self, action: int) -> Any:
        reward = 0.0
        if self.bricks[action]:
            self.bricks[action] = 0
            reward = 1.0
        elif self.hard:
            self.lives -= 2
        else:
            self.lives -= 1
        if not self.bricks.any():
            self.bricks[:] = 1
            reward += 5.0
        return self._obs(), reward, self.lives <= 0, False, {}


def make(hard: bool = False) -> BricksEnv:
    return BricksEnv(hard)


CALLS: list[int] = []


def clear_next(state: dict[str, np.ndarray], rng: np.random.Generator) -> int:
    """A user's own policy (`[levels.l3] policy`): hit the first brick still standing."""
    CALLS.append(1)
    standing = np.flatnonzero(state["bricks"])
    return int(standing[0]) if standing.size else int(rng.integers(BRICKS))
