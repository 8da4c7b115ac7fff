"""Action policies for rollouts, and the plan that makes every episode reproducible.

An episode is a pure function of (seed, episode index): its reset seed, its policy, its
start offset and every action follow from them, which is what makes a replay command exact.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces

Policy = Callable[[Any], Any]

STICKY_REPEAT = 0.75
BIAS = 0.8
LATE_START_MAX_REMAINING = 30


@dataclass(frozen=True)
class EpisodePlan:
    index: int
    reset_seed: int
    policy: str
    # Steps already counted when the episode starts: exercises the time limit (truncation)
    # that random play rarely reaches.
    late_start: int | None


def plan_episode(
    seed: int,
    index: int,
    policies: list[str],
    late_start_fraction: float,
    max_episode_steps: int | None,
) -> EpisodePlan:
    rng = np.random.default_rng([seed, index, 0])
    late = None
    if max_episode_steps and rng.random() < late_start_fraction:
        remaining = int(rng.integers(1, min(LATE_START_MAX_REMAINING, max_episode_steps) + 1))
        late = max_episode_steps - remaining
    return EpisodePlan(index, seed * 100_003 + index, policies[index % len(policies)], late)


def _uniform(space: spaces.Space, rng: np.random.Generator) -> Any:
    if isinstance(space, spaces.Discrete):
        return int(space.start + rng.integers(space.n))
    if isinstance(space, spaces.Box):
        low = np.where(np.isfinite(space.low), space.low, -1.0)
        high = np.where(np.isfinite(space.high), space.high, 1.0)
        return rng.uniform(low, high).astype(space.dtype)
    raise TypeError(f"no policies for action space {space}")


def make_policy(kind: str, space: spaces.Space, seed: int, index: int) -> Policy:
    """A policy for one episode: called with the previous action (None at the start)."""
    rng = np.random.default_rng([seed, index, 1])
    if kind == "uniform":
        return lambda previous: _uniform(space, rng)
    if kind == "sticky":

        def sticky(previous: Any) -> Any:
            if previous is not None and rng.random() < STICKY_REPEAT:
                return previous
            return _uniform(space, rng)

        return sticky
    if kind == "biased":
        favourite = _uniform(space, rng)
        return lambda previous: favourite if rng.random() < BIAS else _uniform(space, rng)
    raise ValueError(f"unknown policy {kind!r}")
