"""What play showed about episodes: how long they run on their own when no time limit is
registered, and whether `reset` draws (start states that differ from seed to seed).

Both are read from the episodes `explore` plays; neither needs a run of its own."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from envport.targets.reference import State

# L3's episode length when the registry sets none and episodes end early: the verifier's
# own default, so a short-lived env is played as before.
DEFAULT_STEPS = 500
# How long an episode with no time limit is played before init stops waiting for its end.
NATURAL_CAP = 10_000
# Headroom over the longest episode seen: L3's policies are not init's, and may live longer.
HEADROOM = 1.25


@dataclass(frozen=True)
class Natural:
    """Episode lengths with no time limit: the ones that ended, and how many were cut."""

    lengths: tuple[int, ...]  # episodes that ended on their own
    cut: int  # episodes still running at the cap
    cap: int

    @property
    def steps(self) -> int:
        """L3's episode length: the longest episode with headroom, in hundreds, at least the
        default; the cap when any episode never ended."""
        if self.cut or not self.lengths:
            return self.cap
        longest = math.ceil(max(self.lengths) * HEADROOM / 100) * 100
        return min(self.cap, max(DEFAULT_STEPS, longest))

    def summary(self) -> str:
        ended = f"{len(self.lengths)} ended on their own"
        if self.lengths:
            ended += f" after {min(self.lengths)} to {max(self.lengths)} steps"
        return (
            f"no time limit: {ended}, {self.cut} still running at {self.cap}; "
            f"L3 plays {self.steps} steps an episode"
        )

    def words(self) -> str:
        ended = len(self.lengths)
        if not ended:
            return (
                f"No time limit is registered, and none of {self.cut} episodes ended within "
                f"{self.cap} steps: the env may never end on its own. L3 plays {self.steps} "
                "steps an episode; set `levels.l3.steps` (or register a time limit) to choose."
            )
        lengths = np.asarray(self.lengths)
        seen = (
            f"{ended} episodes of play ended on their own after {lengths.min()} to "
            f"{lengths.max()} steps (median {int(np.median(lengths))})"
        )
        if self.cut:
            return (
                f"No time limit is registered: {seen}, and {self.cut} had not ended after "
                f"{self.cap}. L3 plays {self.steps} steps an episode; set `levels.l3.steps` "
                "to choose."
            )
        return (
            f"No time limit is registered: {seen}. L3 plays up to {self.steps} steps an "
            f"episode (the longest with a quarter more, in hundreds, at least {DEFAULT_STEPS})."
        )


@dataclass(frozen=True)
class ResetDraws:
    """Start states over seeds: which fields differ from one seed to another."""

    seeds: int
    distinct: int  # distinct start states
    varying: tuple[str, ...]  # fields whose start differs between seeds
    fixed: tuple[str, ...]

    @property
    def draws(self) -> bool:
        return bool(self.varying)

    def summary(self) -> str:
        if not self.draws:
            return f"reset draws nothing the state shows: one start over {self.seeds} seeds"
        return (
            f"reset draws: {self.distinct} distinct starts over {self.seeds} seeds "
            f"(varying: {', '.join(self.varying)})"
        )

    def words(self) -> str:
        if not self.draws:
            return (
                f"`reset` draws nothing the state shows: {self.seeds} seeds gave one start "
                "state, so L2's reset check compares the port's starts with it exactly."
            )
        fixed = f"; the same on every seed: {', '.join(self.fixed)}" if self.fixed else ""
        return (
            f"`reset` draws: {self.seeds} seeds gave {self.distinct} distinct start states "
            f"(varying: {', '.join(self.varying)}{fixed}). No port can match the draws "
            "themselves: L2's reset check compares the distribution of the port's starts with "
            "the reference's (each component, jointly, and discrete ones as a table), and the "
            "seeding checks ask that a seed reproduces its start and that an unseeded reset "
            "goes on drawing where a seeded one started."
        )


def reset_draws(starts: list[State]) -> ResetDraws | None:
    """From the start states of episodes reset with different seeds."""
    if len(starts) < 2:
        return None
    names = list(starts[0])
    varying = tuple(
        n for n in names if any(not np.array_equal(s[n], starts[0][n]) for s in starts[1:])
    )
    keys = {tuple(np.asarray(s[n]).tobytes() for n in names) for s in starts}
    fixed = tuple(n for n in names if n not in varying)
    return ResetDraws(len(starts), len(keys), varying, fixed)
