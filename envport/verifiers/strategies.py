"""Hypothesis strategies for states and actions, drawn from the spec's bounds.

L1 and L2 draw from the whole declared state space, so states a rollout rarely visits (the
cart at the edge with the pole upright) are tried as often as common ones.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from hypothesis import strategies as st

from envport.spec import Bound, PortSpec

# Box actions with infinite bounds are drawn from this range.
UNBOUNDED_ACTION = 1e3


# Integer fields (step counters, grid positions) get extra draws this close to their ends,
# where off-by-one bugs live: one in [0, 500] is otherwise rarely 498.
EDGE = 4


def _integers(low: int, high: int) -> st.SearchStrategy[int]:
    return st.one_of(
        st.integers(low, high),
        st.integers(max(low, high - EDGE), high),
        st.integers(low, min(high, low + EDGE)),
    )


def _field(bound: Bound) -> st.SearchStrategy[np.ndarray]:
    low, high = np.broadcast_arrays(np.asarray(bound.low, float), np.asarray(bound.high, float))
    if bound.integer:
        parts = [_integers(int(lo), int(hi)) for lo, hi in zip(low.flat, high.flat, strict=True)]
        dtype: Any = np.int64
    else:
        parts = [
            st.floats(float(lo), float(hi), allow_nan=False, allow_infinity=False)
            for lo, hi in zip(low.flat, high.flat, strict=True)
        ]
        dtype = np.float64
    return st.tuples(*parts).map(lambda values: np.asarray(values, dtype=dtype).reshape(low.shape))


def state_strategy(spec: PortSpec) -> st.SearchStrategy[dict[str, np.ndarray]]:
    """Dicts of the bounded state fields; unbounded fields keep their value after a reset."""
    return st.fixed_dictionaries({name: _field(b) for name, b in spec.state.bounds.items()})


def action_strategy(space: spaces.Space) -> st.SearchStrategy[Any]:
    if isinstance(space, spaces.Discrete):
        return st.integers(int(space.start), int(space.start + space.n - 1))
    if isinstance(space, spaces.Box):
        low = np.where(np.isfinite(space.low), space.low, -UNBOUNDED_ACTION)
        high = np.where(np.isfinite(space.high), space.high, UNBOUNDED_ACTION)
        width = 32 if space.dtype == np.float32 else 64
        parts = [
            st.floats(float(lo), float(hi), allow_nan=False, width=width)
            for lo, hi in zip(low.flat, high.flat, strict=True)
        ]
        return st.tuples(*parts).map(
            lambda values: np.asarray(values, dtype=space.dtype).reshape(space.shape)
        )
    raise TypeError(f"L1/L2 cannot draw actions from {space}")
