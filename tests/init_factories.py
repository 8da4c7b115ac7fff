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


def _minatar(game: str, sticky: float | None) -> Any:
    import minatar.gym  # MinAtar is an optional extra; only these factories need it

    minatar.gym.register_envs()
    kwargs = {} if sticky is None else {"sticky_action_prob": sticky}
    return gym.make(f"MinAtar/{game}-v1", **kwargs)


def minatar_breakout() -> Any:
    """Sticky actions off: the game's own generator draws, but never changes an outcome."""
    return _minatar("Breakout", 0.0)


def minatar_breakout_sticky() -> Any:
    """MinAtar's default, sticky actions at 0.1: drawn from the game's own RandomState."""
    return _minatar("Breakout", None)


def minatar_asterix() -> Any:
    return _minatar("Asterix", 0.0)
