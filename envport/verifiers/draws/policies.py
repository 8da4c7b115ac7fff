"""Action policies for rollouts, and the plan that makes every episode reproducible.

An episode is a pure function of (seed, episode index): its reset seed, its policy, its
start offset and every action follow from them, which is what makes a replay command exact.
The draws come from a counter-based generator (Philox keyed by the seed) seeked to the
episode, so no episode depends on another, and actions are drawn in blocks as an episode
runs: most episodes end long before the step limit, and seeding a generator per episode
and drawing every step up front used to cost more than the reference's own steps.

A share of steps (`levels.out_of_range_share`) takes an action outside the declared space
that the reference accepts (`action_range`), as a policy with an unclipped Gaussian head
would. Those draws come from a stream of their own, so the in-range actions of an episode
are the same with or without them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces

from envport.verifiers.draws.action_range import ActionRange

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


# Actions drawn at a time; a sticky policy draws afresh at the start of each block.
BLOCK = 32
# The second word of the generator's counter: which stream of an episode's draws.
_PLAN, _FAVOURITE, _BLOCKS = 0, 1, 2
# The first word: 1 for the out-of-range draws, apart from the in-range ones.
_OUTSIDE = 1


class _Draws:
    """Philox keyed by the run's seed; `at(index, stream)` seeks to one episode's stream."""

    def __init__(self, seed: int) -> None:
        self.bits = np.random.Philox(key=seed)
        self.rng = np.random.Generator(self.bits)
        self._state = self.bits.state

    def at(self, index: int, stream: int, word: int = 0) -> np.random.Generator:
        state = self._state
        state["state"]["counter"] = np.array([word, stream, index, 0], dtype=np.uint64)
        state["buffer_pos"] = 4  # drop anything buffered from the last position
        state["has_uint32"] = 0
        self.bits.state = state
        return self.rng


class Planner:
    """Plans and actions for one run's episodes."""

    def __init__(
        self,
        seed: int,
        policies: Sequence[str] | None = None,
        late_start_fraction: float = 0.0,
        max_episode_steps: int | None = None,
        outside: ActionRange | None = None,
    ) -> None:
        self.seed = seed
        self.outside = outside if outside is not None and outside.active else None
        self.policies = list(policies or ["uniform"])
        self.late_start_fraction = late_start_fraction
        self.max_episode_steps = max_episode_steps
        self._draws = _Draws(seed)
        # Its own generator: seeking it never moves the in-range draws' position.
        self._outside_draws = _Draws(seed)

    def plan(self, index: int) -> EpisodePlan:
        late = None
        steps = self.max_episode_steps
        if steps:
            rng = self._draws.at(index, _PLAN)
            if rng.random() < self.late_start_fraction:
                late = steps - int(rng.integers(1, min(LATE_START_MAX_REMAINING, steps) + 1))
        policy = self.policies[index % len(self.policies)]
        return EpisodePlan(index, self.seed * 100_003 + index, policy, late)

    def actions(self, kind: str, space: spaces.Space, index: int, count: int) -> Iterator[Any]:
        """The episode's actions, a block at a time, as many as the caller takes."""
        if kind not in ("uniform", "sticky", "biased"):
            raise ValueError(f"unknown policy {kind!r}")
        favourite = None
        if kind == "biased":
            favourite = uniform_actions(space, self._draws.at(index, _FAVOURITE), 1)[0]
        for block in range(0, count, BLOCK):
            rng = self._draws.at(index, _BLOCKS + block // BLOCK)
            size = min(BLOCK, count - block)
            draws = uniform_actions(space, rng, size)
            if self.outside is not None:
                stream = self._outside_draws.at(index, _BLOCKS + block // BLOCK, _OUTSIDE)
                draws = _outside(self.outside, space, stream, draws)
            yield from self._block(kind, space, rng, draws, favourite)

    @staticmethod
    def _block(
        kind: str, space: spaces.Space, rng: np.random.Generator, draws: np.ndarray, favourite: Any
    ) -> list[Any]:
        count = len(draws)
        if kind == "sticky":
            keep = rng.random(count) < STICKY_REPEAT
            keep[0] = False
            # Each step repeats the last fresh draw at or before it.
            last_fresh = np.maximum.accumulate(np.where(keep, 0, np.arange(count)))
            draws = draws[last_fresh]
        elif kind == "biased":
            chosen = rng.random(count) < BIAS
            draws = np.where(chosen.reshape(-1, *[1] * (draws.ndim - 1)), favourite, draws)
        if isinstance(space, spaces.Discrete):
            return draws.tolist()  # plain ints, as a Gymnasium env expects
        return list(draws)


def uniform_actions(space: spaces.Space, rng: np.random.Generator, count: int) -> np.ndarray:
    if isinstance(space, spaces.Discrete):
        # floor(u * n): bias below 2**-50 for any n an env uses, and cheaper than integers().
        return int(space.start) + (rng.random(count) * int(space.n)).astype(np.int64)
    if isinstance(space, spaces.MultiDiscrete):
        # A joint action: every agent's action uniform over its own, as floor(u * n).
        nvec = np.asarray(space.nvec)
        return (rng.random((count, *nvec.shape)) * nvec).astype(space.dtype)
    if isinstance(space, spaces.Box):
        low = np.where(np.isfinite(space.low), space.low, -1.0)
        high = np.where(np.isfinite(space.high), space.high, 1.0)
        return rng.uniform(low, high, size=(count, *space.shape)).astype(space.dtype)
    raise TypeError(f"no policies for action space {space}")


def _outside(
    outside: ActionRange, space: spaces.Space, rng: np.random.Generator, draws: np.ndarray
) -> np.ndarray:
    """`draws` with about `outside.share` of them replaced by out-of-range actions."""
    count = len(draws)
    chosen = rng.random(count) < outside.share
    if isinstance(space, spaces.Discrete) and outside.invalid:
        values = np.asarray(outside.invalid, dtype=np.int64)
        replaced = values[rng.integers(0, len(values), size=count)]
    elif outside.low is not None and outside.high is not None:
        # The widened range, inside included: a Gaussian head's samples are not all outside.
        replaced = rng.uniform(outside.low, outside.high, size=draws.shape).astype(draws.dtype)
    else:
        return draws
    mask = chosen.reshape(-1, *[1] * (draws.ndim - 1))
    return np.where(mask, replaced, draws)


def plan_actions(kind: str, space: spaces.Space, seed: int, index: int, count: int) -> list[Any]:
    """All `count` actions of one episode at once (for checks that need them up front)."""
    return list(Planner(seed).actions(kind, space, index, count))
