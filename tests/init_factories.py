"""Reference factories in the shapes users write them, for `envport init pkg.mod:factory`:
the bare class, `gym.make` (Gymnasium adds its env checker, order enforcing and time
limit), and the env wrapped by hand. Only the time limit's counter is state."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.envs.classic_control.cartpole import CartPoleEnv
from gymnasium.wrappers import OrderEnforcing, RecordEpisodeStatistics, TimeLimit


def made() -> Any:
    return gym.make("CartPole-v1")


def made_and_recorded() -> Any:
    return RecordEpisodeStatistics(gym.make("CartPole-v1"))


def wrapped() -> Any:
    return RecordEpisodeStatistics(OrderEnforcing(TimeLimit(CartPoleEnv(), 500)))


def bare() -> Any:
    return CartPoleEnv()


class Fuse(gym.Env):
    """A fuse that burns 1 or 2 units a step and ends the episode when burnt through, with
    no time limit: episodes run 600 to 1,200 steps on their own. `reset` lights it a few
    units in, drawn from np_random."""

    LENGTH = 1200

    def __init__(self) -> None:
        self.action_space = gym.spaces.Discrete(2)
        self.observation_space = gym.spaces.Box(0, self.LENGTH + 1, (1,), np.int64)
        self.burnt = 0

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> Any:
        super().reset(seed=seed)
        self.burnt = int(self.np_random.integers(0, 10))
        return np.array([self.burnt]), {}

    def step(self, action: Any) -> Any:
        self.burnt += 1 + int(action)
        done = self.burnt >= self.LENGTH
        return np.array([self.burnt]), 1.0, done, False, {}


def fuse() -> Any:
    return Fuse()
