"""Hypothesis strategies for states and actions, drawn from the spec's bounds.

L1 and L2 draw from the whole declared state space, so states a rollout rarely visits (the
cart at the edge with the pole upright) are tried as often as common ones. A share of every
float draw (`levels.edge_share`) lands at or right next to a point where ports go wrong:
a constant the reference's source compares against or clips to, zero, or a bound, exactly
or one ulp or a small epsilon away. Integers get their ends and the step limit. A field of
many components (a brick map, a grid) gets the same share drawn at its edges as a whole:
empty, full, a single item left, a single gap. A share of actions
(`levels.out_of_range_share`) lies outside the declared action space.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from gymnasium import spaces
from hypothesis import strategies as st

from envport.io import profile
from envport.spec import Bound, FieldSpec, PortSpec
from envport.structure import derived, length_leaf, violated
from envport.targets.reference import valid_helpers
from envport.verifiers.draws.action_range import ActionRange, action_range
from envport.verifiers.draws.aligned import aligned_fields, holds_row_by_row, row_strategy
from envport.verifiers.draws.constants import source_constants
from envport.verifiers.draws.reached import reached_states

# Box actions with infinite bounds are drawn from this range.
UNBOUNDED_ACTION = 1e3

# Integer fields (step counters, grid positions) get extra draws this close to their ends,
# where off-by-one bugs live: one in [0, 500] is otherwise rarely 498.
EDGE = 4

# A field of more components than this is a collection or a grid: besides component by
# component, it is drawn at its edges as a whole (empty, full, a single item, a single gap).
SMALL_FIELD = 8

# Around an edge point: exactly at it, one ulp either side, and a small step either side
# (relative to the larger of the point and the field's width).
OFFSETS = ("at", "ulp+", "ulp-", "eps+", "eps-", "eps3+", "eps3-")
_EPS = {"eps": 1e-6, "eps3": 1e-3}


@dataclass(frozen=True)
class Draws:
    """What L1 and L2 draw beyond uniform values: the reference's constants, how often
    draws go to the edges, the out-of-range actions, and integer points per field."""

    constants: tuple[float, ...] = ()
    edge_share: float = 0.0
    actions: ActionRange = field(default_factory=ActionRange)
    integers: dict[str, tuple[int, ...]] = field(default_factory=dict)
    # States the reference reached in play (`[state.reached]`) and the share of the drawn
    # states taken from them.
    reached: Sequence[dict[str, np.ndarray]] = ()
    reached_share: float = 0.0


def draws_for(spec: PortSpec, reference: Any) -> Draws:
    """The spec's edge and out-of-range settings applied to this reference."""
    levels = spec.levels
    limit = reference.max_episode_steps
    integers: dict[str, tuple[int, ...]] = {}
    if spec.state.step_counter and limit:
        integers[spec.state.step_counter] = (limit - 1, limit)
    reached = spec.state.reached
    return Draws(
        constants=source_constants(reference.env).all,
        edge_share=levels.edge_share,
        actions=action_range(reference, levels.out_of_range, levels.out_of_range_share),
        integers=integers,
        reached=reached_states(spec, reference),
        reached_share=reached.share if reached is not None else 0.0,
    )


def mix(word: int) -> int:
    """A 64-bit mix (splitmix64's finaliser): neighbouring words go to unrelated values."""
    word = (word ^ (word >> 30)) * 0xBF58476D1CE4E5B9 & 0xFFFFFFFFFFFFFFFF
    word = (word ^ (word >> 27)) * 0x94D049BB133111EB & 0xFFFFFFFFFFFFFFFF
    return word ^ (word >> 31)


def spread(items: Sequence[Any]) -> st.SearchStrategy[Any]:
    """One of `items`, spread over all of them: `sampled_from` favours its first items
    (simplest to shrink to), here the lowest bound exactly. A mixed 32-bit word picks
    instead (still reproducible, and shrinkable to one item)."""
    return st.integers(0, 2**32 - 1).map(lambda word: items[mix(word) % len(items)])


def weighted(share: float, rare: st.SearchStrategy, common: st.SearchStrategy) -> st.SearchStrategy:
    """`rare` about `share` of the time (one_of has no weights: `common` is repeated)."""
    if share <= 0:
        return common
    if share >= 1:
        return rare
    repeats = max(1, round((1 - share) / share))
    return st.one_of(*[common] * repeats, rare)


def edge_points(low: float, high: float, constants: tuple[float, ...]) -> list[float]:
    """The bounds, zero and the constants that lie within [low, high]."""
    inside = {c for c in constants if low <= c <= high}
    if low <= 0.0 <= high:
        inside.add(0.0)
    return sorted(inside | {low, high})


def near(point: float, kind: str, scale: float, dtype: Any = np.float64) -> float:
    """`point` moved as `kind` says; ulps are ulps of `dtype`."""
    value = dtype(point)
    if kind == "at":
        return float(value)
    if kind.startswith("ulp"):
        towards = np.inf if kind.endswith("+") else -np.inf
        return float(np.nextafter(value, dtype(towards)))
    step = _EPS[kind[:-1]] * scale
    return float(value) + (step if kind.endswith("+") else -step)


def _edge_floats(low: float, high: float, points: list[float], dtype: Any) -> st.SearchStrategy:
    scale = max(high - low, *(abs(p) for p in points), 1e-12)

    def placed(pair: tuple[float, str]) -> float:
        return float(np.clip(near(pair[0], pair[1], scale, dtype), low, high))

    return spread([(point, kind) for point in points for kind in OFFSETS]).map(placed)


def _integers(low: int, high: int, extra: tuple[int, ...] = ()) -> st.SearchStrategy[int]:
    # 0, one before the limit and the limit itself, when they are in range.
    points = sorted({p for p in (low, high, high - 1, 0, *extra) if low <= p <= high})
    return st.one_of(
        st.integers(low, high),
        st.integers(max(low, high - EDGE), high),
        st.integers(low, min(high, low + EDGE)),
        st.sampled_from(points),
    )


def _field(name: str, bound: Bound, draws: Draws) -> st.SearchStrategy[np.ndarray]:
    each = _components(name, bound, draws)
    low, high = np.broadcast_arrays(np.asarray(bound.low, float), np.asarray(bound.high, float))
    if low.size <= SMALL_FIELD:
        return each
    # A collection or a grid: its components drawn independently almost never make an empty
    # board (Breakout's bricks: one draw in 2^100), where rules live; edges are drawn whole.
    return weighted(draws.edge_share, _collection_edges(low, high, bound.integer), each)


def _collection_edges(low: np.ndarray, high: np.ndarray, integer: bool) -> st.SearchStrategy:
    """A field at an edge as a whole: every component at its low bound (empty), at its high
    bound (full), one at its high bound among lows (a single item left), or one low among
    highs (a single gap)."""
    dtype: Any = np.int64 if integer else np.float64

    def build(pair: tuple[str, int]) -> np.ndarray:
        kind, word = pair
        index = word % low.size
        values = (high if kind in ("full", "one gap") else low).copy().reshape(-1)
        if kind == "one item":
            values[index] = high.reshape(-1)[index]
        elif kind == "one gap":
            values[index] = low.reshape(-1)[index]
        return values.astype(dtype).reshape(low.shape)

    kinds = ["empty", "full", "one item", "one gap"]
    return st.tuples(st.sampled_from(kinds), st.integers(0, 2**31 - 1).map(mix)).map(build)


def _components(name: str, bound: Bound, draws: Draws) -> st.SearchStrategy[np.ndarray]:
    parts, dtype = component_parts(name, bound, draws)
    shape = np.broadcast_arrays(np.asarray(bound.low, float), np.asarray(bound.high, float))[
        0
    ].shape
    return st.tuples(*parts).map(lambda values: np.asarray(values, dtype=dtype).reshape(shape))


def component_parts(
    name: str, bound: Bound, draws: Draws
) -> tuple[list[st.SearchStrategy[Any]], Any]:
    """One strategy per component of a bounded field (flattened), and the field's dtype."""
    low, high = np.broadcast_arrays(np.asarray(bound.low, float), np.asarray(bound.high, float))
    if bound.integer:
        extra = draws.integers.get(name, ()) + tuple(int(c) for c in draws.constants if c == int(c))
        parts = [
            _integers(int(lo), int(hi), extra) for lo, hi in zip(low.flat, high.flat, strict=True)
        ]
        dtype: Any = np.int64
    else:
        parts = [
            weighted(
                draws.edge_share,
                _edge_floats(
                    float(lo), float(hi), edge_points(lo, hi, draws.constants), np.float64
                ),
                st.floats(float(lo), float(hi), allow_nan=False, allow_infinity=False),
            )
            for lo, hi in zip(low.flat, high.flat, strict=True)
        ]
        dtype = np.float64
    return parts, dtype


def _codes(spec: PortSpec, declared: FieldSpec) -> st.SearchStrategy[int]:
    assert declared.enum is not None
    return spread(sorted(spec.state.enums[declared.enum].values()))


def _declared(
    spec: PortSpec, name: str, declared: FieldSpec, draws: Draws
) -> st.SearchStrategy[dict[str, np.ndarray]] | None:
    """A declared field's leaves: an enum value from its codes; a list's items (its enum's
    codes or its `items` bounds) with a length from 0 to its capacity, the items past the
    length at the pad value. None when nothing says where to draw from."""
    dtype = declared.numpy_dtype
    if declared.kind != "list":
        if declared.enum is None:
            return None
        bound = spec.state.bounds.get(name)
        shape = np.shape(bound.low) if bound is not None else ()
        codes = st.tuples(*[_codes(spec, declared)] * int(np.prod(shape)))
        return codes.map(lambda v: {name: np.asarray(v, dtype=np.int64).reshape(shape)})
    assert declared.capacity is not None
    if declared.enum is not None:
        item: st.SearchStrategy[Any] = _codes(spec, declared)
    elif declared.items is not None:
        # A record's fields (`[x, y, right, timer]`) as one list item, a number as itself.
        item = _field(name, declared.items, draws).map(lambda v: v.tolist())
    else:
        return None
    capacity = declared.capacity
    pad = np.full(declared.item_shape, declared.pad).tolist()

    def padded(pair: tuple[tuple[Any, ...], int]) -> dict[str, np.ndarray]:
        items, length = pair
        values = np.asarray([*items[:length], *[pad] * (capacity - length)], dtype=dtype)
        return {name: values, length_leaf(name): np.asarray(length, dtype=np.int64)}

    return st.tuples(st.tuples(*[item] * capacity), _integers(0, capacity)).map(padded)


def state_strategy(
    spec: PortSpec, draws: Draws | None = None
) -> st.SearchStrategy[dict[str, np.ndarray]]:
    """Dicts of the bounded state fields; unbounded fields keep their value after a reset.
    Declared fields (docs/structured-state.md) draw their leaves from their enums and
    capacities, states the reference reached in play are drawn whole (`[state.reached]`),
    `state.derive` computes its fields from the others, and a state breaking one of
    `state.valid` is not drawn."""
    draws = draws or Draws()
    structured = {
        name: found
        for name, declared in spec.state.declared.items()
        if (found := _declared(spec, name, declared, draws)) is not None
    }
    # Slots of objects whose rules hold slot by slot: drawn slot by slot (draws/aligned.py).
    slotted = aligned_fields(spec, SMALL_FIELD) if spec.state.valid else None
    if slotted is not None and not holds_row_by_row(spec, *slotted):
        slotted = None
    rows = set(slotted[0]) if slotted is not None else set()
    plain = st.fixed_dictionaries(
        {
            name: _field(name, b, draws)
            for name, b in spec.state.bounds.items()
            if name not in structured and name not in rows
        }
    )
    if slotted is not None:
        fields, rules, length = slotted
        slots = row_strategy(
            fields,
            rules,
            length,
            lambda name: component_parts(name, spec.state.bounds[name], draws),
        )
        plain = st.tuples(plain, slots).map(lambda parts: {**parts[0], **parts[1]})
    merged = plain
    if structured:
        merged = st.tuples(plain, *structured.values()).map(
            lambda parts: {k: v for part in parts for k, v in part.items()}
        )
    helpers = valid_helpers(spec) if spec.state.valid or spec.state.derive else {}
    if spec.state.derive:
        # Fields that are functions of the others, computed on every state drawn from the
        # fields (states the reference reached already hold them).
        merged = merged.map(lambda state: derived(spec.state, state, helpers))
    if draws.reached:
        # Copies: a check may change what it is given, the pool serves every draw.
        pool = spread(draws.reached).map(lambda state: {k: np.array(v) for k, v in state.items()})
        merged = pool if draws.reached_share >= 1 else weighted(draws.reached_share, pool, merged)
    if spec.state.valid:
        return merged.filter(lambda state: _valid(spec, state, helpers))
    return merged


def _valid(spec: PortSpec, state: dict[str, np.ndarray], helpers: dict[str, Any]) -> bool:
    """`state.valid` on one drawn state, counted and timed apart in the profile: a rule
    most draws break makes Hypothesis draw again and again for each example it keeps."""
    profile.tick("states_checked")
    with profile.phase("validity"):
        kept = violated(spec.state, state, helpers) is None
    if not kept:
        profile.tick("states_rejected")
    return kept


def _box_component(
    lo: float, hi: float, outer: tuple[float, float] | None, draws: Draws, dtype: Any
) -> st.SearchStrategy[float]:
    width: Literal[32, 64] = 32 if dtype == np.float32 else 64
    inside = st.floats(lo, hi, allow_nan=False, width=width)
    wide_lo, wide_hi = outer if outer is not None else (lo, hi)
    points = sorted(set(edge_points(wide_lo, wide_hi, draws.constants)) | {lo, hi})
    edges = _edge_floats(wide_lo, wide_hi, points, dtype)
    drawn = weighted(draws.edge_share, edges, inside)
    if outer is None:
        return drawn
    # Rounded to the action's width first: a float32 beyond the widened range is no draw.
    wide = st.floats(
        float(dtype(wide_lo)), float(dtype(wide_hi)), allow_nan=False, width=width
    ).filter(lambda v: wide_lo <= v <= wide_hi)
    return weighted(draws.actions.share, wide, drawn)


def action_strategy(space: spaces.Space, draws: Draws | None = None) -> st.SearchStrategy[Any]:
    draws = draws or Draws()
    outside = draws.actions
    if isinstance(space, spaces.Discrete):
        valid = st.integers(int(space.start), int(space.start) + int(space.n) - 1)
        if outside.share > 0 and outside.invalid:
            return weighted(outside.share, st.sampled_from(outside.invalid), valid)
        return valid
    if isinstance(space, spaces.MultiDiscrete):
        # A joint action (agents moving at once): each agent's Discrete action, in range.
        entries = [st.integers(0, int(n) - 1) for n in np.asarray(space.nvec).flat]
        return st.tuples(*entries).map(
            lambda values: np.asarray(values, dtype=space.dtype).reshape(space.shape)
        )
    if isinstance(space, spaces.Box):
        low = np.where(np.isfinite(space.low), space.low, -UNBOUNDED_ACTION)
        high = np.where(np.isfinite(space.high), space.high, UNBOUNDED_ACTION)
        dtype = space.dtype
        assert dtype is not None  # a Box always has one (only the base Space may not)
        outers: list[tuple[float, float] | None] = [None] * low.size
        if outside.low is not None and outside.high is not None and outside.share > 0:
            outers = [
                (float(outside.low.flat[i]), float(outside.high.flat[i])) for i in range(low.size)
            ]
        parts = [
            _box_component(float(lo), float(hi), outers[i], draws, dtype.type)
            for i, (lo, hi) in enumerate(zip(low.flat, high.flat, strict=True))
        ]
        return st.tuples(*parts).map(
            lambda values: np.asarray(values, dtype=space.dtype).reshape(space.shape)
        )
    raise TypeError(f"L1/L2 cannot draw actions from {space}")
