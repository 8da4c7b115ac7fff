"""A test subject: a walk on a line whose step draws from the env's own RandomState, which
no state field carries (as MinAtar's games draw from theirs). Reached by specs written in
the tests as `gusty_env:make` (tests/ is on sys.path under pytest, PYTHONPATH for a CLI)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np


class GustyWalk(gym.Env):
    observation_space = gym.spaces.Box(-20.0, 20.0, shape=(1,), dtype=np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, gusts: bool = True, reseeds: bool = False) -> None:
        self.gusts = gusts
        self.reseeds = reseeds
        self.position = 0
        self.random = np.random.RandomState(7)

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        if self.reseeds and seed is not None:
            # As MinAtar's `seed`: a new RandomState object, not the old one reseeded.
            self.random = np.random.RandomState(seed)
        self.position = int(self.np_random.integers(-3, 4))
        return np.array([self.position], dtype=np.float32), {}

    def step(self, action):
        self.position += 1 if action == 1 else -1
        if self.gusts and self.random.rand() < 0.5:
            self.position += 1  # a gust of wind, from a generator the state does not hold
        terminated = abs(self.position) >= 10
        return np.array([self.position], dtype=np.float32), -1.0, terminated, False, {}


def make(gusts: bool = True, reseeds: bool = False) -> GustyWalk:
    return GustyWalk(gusts, reseeds)
