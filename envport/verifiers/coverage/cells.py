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


def cell_of(spec: PortSpec, state: State, limit: int | None) -> tuple[Any, Any]:
    """The coarse cell of a state, in two parts: its level (what each collection or grid
    holds, how far through the time limit it is) and where each small field's components lie
    in a few buckets of their bounds. Picks go level first: a board with fewer bricks left
    is a new level, and every level gets its turn however many positions it has."""
    level: list[Any] = []
    place: list[Any] = []
    for name in sorted(state):
        values = np.asarray(state[name])
        bound = spec.state.bounds.get(name)
        if name == spec.state.step_counter:
            counted = int(values.reshape(-1)[0])
            level.append(counted * 8 // limit if limit else int(math.log2(1 + abs(counted))))
        elif values.size <= SMALL:
            # A position, a velocity vector, a scalar: where each component lies.
            flat = values.reshape(-1)
            place.append(
                tuple(
                    _bucket(float(flat[i]), _component(bound, i), values.dtype)
                    for i in range(flat.size)
                )
            )
        elif _typed_grid(spec, name):
            # A grid of typed cells: how many of each type (the first channel).
            channel = values.reshape(-1, values.shape[-1])[:, 0].astype(np.int64)
            level.append(tuple(np.bincount(channel - channel.min(initial=0)).tolist()))
        else:
            low = _low(bound, values)
            level.append(int(np.count_nonzero(values.reshape(-1) != low)))
    return tuple(level), tuple(place)


def _typed_grid(spec: PortSpec, name: str) -> bool:
    """A grid whose cells hold codes on a last axis of channels, the first the cell's type
    (MiniGrid's); a grid of single values or of 0/1 planes (a brick map) counts what it
    holds as any other collection does."""
    grid = spec.state.grids.get(name)
    return grid is not None and bool(grid.channels) and not grid.planes


def _component(bound: Bound | None, index: int) -> Bound | None:
    """Component `index`'s bounds, from a bound given per component or once for all."""
    if bound is None:
        return None
    ends = [np.asarray(end, dtype=float).reshape(-1) for end in (bound.low, bound.high)]
    low, high = (float(end[index] if end.size > index else end[0]) for end in ends)
    return bound.model_copy(update={"low": low, "high": high})


def _low(bound: Bound | None, values: np.ndarray) -> Any:
    if bound is None:
        return 0
    low = np.asarray(bound.low, dtype=float).reshape(-1)
    return low if low.size == values.size else low[0]


def _bucket(x: float, bound: Bound | None, dtype: np.dtype[Any]) -> Any:
    if not math.isfinite(x):
        return str(x)
    if bound is not None:
        low = float(np.min(bound.low))
        high = float(np.max(bound.high))
        if np.issubdtype(dtype, np.integer) and high - low < EXACT:
            return int(x)
        if high > low:
            return int(min(BUCKETS - 1, max(0, (x - low) / (high - low) * BUCKETS)))
    if np.issubdtype(dtype, np.integer) or np.issubdtype(dtype, np.bool_):
        return int(x) if abs(x) < BUCKETS else int(math.copysign(BUCKETS, x))
    return int(math.copysign(min(BUCKETS, int(math.log2(1 + abs(x)))), x))
