"""Actions outside the declared action space that the reference still accepts.

Real policies send them: a Gaussian head's unclipped sample, an index computed off by one.
The reference decides what they mean (Pendulum clips the torque before charging for it;
Acrobot's `AVAIL_TORQUE[a]` reads a = -1 as the last torque), and a port must agree.

Box: values up to `out_of_range` half-widths beyond each bound. Discrete: each invalid
value the reference is found to accept, tried once on the reference itself (a reset, then
one step); a value it rejects (CartPole's assert, Taxi's KeyError) is never drawn.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces

# Offsets tried past each end of a Discrete space: just past it, a little further, and a
# whole space-width away (Python's negative indexing accepts -1 ... -n).
_NEAR = 4


@dataclass(frozen=True)
class ActionRange:
    """Where actions are drawn from beyond the declared space, and how often."""

    share: float = 0.0  # of L1/L2 actions and L3 steps drawn outside
    low: np.ndarray | None = None  # Box: the widened range
    high: np.ndarray | None = None
    invalid: tuple[int, ...] = ()  # Discrete: invalid values the reference accepts

    @property
    def active(self) -> bool:
        return self.share > 0 and (self.low is not None or bool(self.invalid))


def discrete_candidates(space: spaces.Discrete) -> list[int]:
    """Invalid values whose handling differs by class: just past either end, further past,
    and Python's negative indices down to -n and one beyond."""
    start, n = int(space.start), int(space.n)
    below = {start - k for k in range(1, min(n, _NEAR) + 1)} | {start - n, start - n - 1}
    above = {start + n + k for k in range(min(n, _NEAR))} | {start + 2 * n}
    return sorted(below | above)


def accepted_invalid(reference: Any, seed: int = 0) -> tuple[int, ...]:
    """The candidates the reference steps without raising, each from a fresh reset."""
    space = reference.action_space
    if not isinstance(space, spaces.Discrete):
        return ()
    accepted = []
    for value in discrete_candidates(space):
        reference.reset(seed)
        try:
            reference.step(value)
        except Exception:  # the reference rejects this class of value: never drawn
            continue
        accepted.append(value)
    reference.reset(seed)
    return tuple(accepted)


def box_outer(space: spaces.Box, factor: float) -> tuple[np.ndarray, np.ndarray] | None:
    """[low - factor * half-width, high + factor * half-width]; None if a bound is infinite."""
    if factor <= 0 or not (np.all(np.isfinite(space.low)) and np.all(np.isfinite(space.high))):
        return None
    low, high = np.asarray(space.low, np.float64), np.asarray(space.high, np.float64)
    half = (high - low) / 2
    return low - factor * half, high + factor * half


def action_range(reference: Any, factor: float, share: float) -> ActionRange:
    """The reference's out-of-range actions, as the spec's `[levels]` settings ask."""
    space = reference.action_space
    if share <= 0:
        return ActionRange()
    if isinstance(space, spaces.Box):
        outer = box_outer(space, factor)
        if outer is None:
            return ActionRange()
        return ActionRange(share, outer[0], outer[1])
    if isinstance(space, spaces.Discrete):
        return ActionRange(share, invalid=accepted_invalid(reference))
    return ActionRange()
