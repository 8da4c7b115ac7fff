"""Action policies for rollouts, and the plan that makes every episode reproducible.

An episode is a pure function of (seed, episode index): its reset seed, its policy, its
start offset and every action follow from them, which is what makes a replay command exact.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces

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


def _uniform(space: spaces.Space, rng: np.random.Generator, count: int) -> np.ndarray:
    if isinstance(space, spaces.Discrete):
        return space.start + rng.integers(space.n, size=count)
    if isinstance(space, spaces.Box):
        low = np.where(np.isfinite(space.low), space.low, -1.0)
        high = np.where(np.isfinite(space.high), space.high, 1.0)
        return rng.uniform(low, high, size=(count, *space.shape)).astype(space.dtype)
    raise TypeError(f"no policies for action space {space}")


def plan_actions(kind: str, space: spaces.Space, seed: int, index: int, count: int) -> list[Any]:
    """The episode's actions, drawn up front: these policies do not look at the state, and
    drawing in bulk keeps the reference's episodes close to the cost of bare stepping."""
    rng = np.random.default_rng([seed, index, 1])
    draws = _uniform(space, rng, count)
    if kind == "sticky":
        keep = rng.random(count) < STICKY_REPEAT
        keep[0] = False
        # Each step repeats the last fresh draw at or before it.
        last_fresh = np.maximum.accumulate(np.where(keep, 0, np.arange(count)))
        draws = draws[last_fresh]
    elif kind == "biased":
        favourite = _uniform(space, rng, 1)[0]
        chosen = rng.random(count) < BIAS
        draws = np.where(chosen.reshape(-1, *[1] * (draws.ndim - 1)), favourite, draws)
    elif kind != "uniform":
        raise ValueError(f"unknown policy {kind!r}")
    if isinstance(space, spaces.Discrete):
        return draws.tolist()  # plain ints, as a Gymnasium env expects
    return list(draws)
