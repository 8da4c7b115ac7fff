"""The archive's cells for l3.explore (verifiers/explore.py): a coarse key of a state, so
the search keeps one state per kind of place play reached and picks among kinds, not among
the many states of a common one."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from envport.spec import Bound, PortSpec

State = dict[str, np.ndarray]

# Buckets a bounded float falls in.
BUCKETS = 4
# A bounded integer with fewer values than this keeps each (a grid position, a direction):
# which of them a state has decides where play goes next.
EXACT = 16
# A field of this many components or fewer is cut into buckets component by component; a
# larger one (a grid, a list) counts what it holds.
SMALL = 8


class CellKeys:
    """The coarse cell of a state, in two parts: its level (what each collection or grid
    holds, how far through the time limit it is) and where each small field's components lie
    in a few buckets of their bounds. Picks go level first: a board with fewer bricks left
    is a new level, and every level gets its turn however many positions it has.

    One per spec, each field's bounds read once: l3.explore keys every state it reaches
    (20,000 in Seaquest), and reading a small field's per-component bounds afresh for each
    state was most of the search's own time."""

    def __init__(self, spec: PortSpec, limit: int | None) -> None:
        self.spec, self.limit = spec, limit
        # Per small field, by its size and dtype: each component's (low, high) or None,
        # and whether its values are integers, booleans.
        self._plans: dict[
            tuple[str, int, str], tuple[list[tuple[float, float] | None], bool, bool]
        ] = {}

    def __call__(self, state: State) -> tuple[Any, Any]:
        spec, limit = self.spec, self.limit
        level: list[Any] = []
        place: list[Any] = []
        for name in sorted(state):
            values = np.asarray(state[name])
            if name == spec.state.step_counter:
                counted = int(values.reshape(-1)[0])
                level.append(counted * 8 // limit if limit else int(math.log2(1 + abs(counted))))
            elif values.size <= SMALL:
                # A position, a velocity vector, a scalar: where each component lies.
                ends, integer, boolean = self._plan(name, values)
                flat = values.reshape(-1).tolist()
                place.append(
                    tuple(
                        _bucket(float(x), end, integer, boolean)
                        for x, end in zip(flat, ends, strict=True)
                    )
                )
            elif _typed_grid(spec, name):
                # A grid of typed cells: how many of each type (the first channel).
                channel = values.reshape(-1, values.shape[-1])[:, 0].astype(np.int64)
                level.append(tuple(np.bincount(channel - channel.min(initial=0)).tolist()))
            else:
                low = _low(spec.state.bounds.get(name), values)
                level.append(int(np.count_nonzero(values.reshape(-1) != low)))
        return tuple(level), tuple(place)

    def _plan(
        self, name: str, values: np.ndarray
    ) -> tuple[list[tuple[float, float] | None], bool, bool]:
        key = (name, values.size, values.dtype.str)
        plan = self._plans.get(key)
        if plan is None:
            bound = self.spec.state.bounds.get(name)
            plan = self._plans[key] = (
                [_component(bound, i) for i in range(values.size)],
                bool(np.issubdtype(values.dtype, np.integer)),
                bool(np.issubdtype(values.dtype, np.bool_)),
            )
        return plan


def _typed_grid(spec: PortSpec, name: str) -> bool:
    """A grid whose cells hold codes on a last axis of channels, the first the cell's type
    (MiniGrid's); a grid of single values or of 0/1 planes (a brick map) counts what it
    holds as any other collection does."""
    grid = spec.state.grids.get(name)
    return grid is not None and bool(grid.channels) and not grid.planes


def _component(bound: Bound | None, index: int) -> tuple[float, float] | None:
    """Component `index`'s bounds, from a bound given per component or once for all."""
    if bound is None:
        return None
    ends = [np.asarray(end, dtype=float).reshape(-1) for end in (bound.low, bound.high)]
    low, high = (float(end[index] if end.size > index else end[0]) for end in ends)
    return low, high


def _low(bound: Bound | None, values: np.ndarray) -> Any:
    if bound is None:
        return 0
    low = np.asarray(bound.low, dtype=float).reshape(-1)
    return low if low.size == values.size else low[0]


def _bucket(x: float, ends: tuple[float, float] | None, integer: bool, boolean: bool) -> Any:
    if not math.isfinite(x):
        return str(x)
    if ends is not None:
        low, high = ends
        if integer and high - low < EXACT:
            return int(x)
        if high > low:
            return int(min(BUCKETS - 1, max(0, (x - low) / (high - low) * BUCKETS)))
    if integer or boolean:
        return int(x) if abs(x) < BUCKETS else int(math.copysign(BUCKETS, x))
    return int(math.copysign(min(BUCKETS, int(math.log2(1 + abs(x)))), x))
