"""Reference factories in the shapes users write them, for `envport init pkg.mod:factory`:
the bare class, `gym.make` (Gymnasium adds its env checker, order enforcing and time
limit), and the env wrapped by hand. Only the time limit's counter is state."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
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
