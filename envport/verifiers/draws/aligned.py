"""Slots of objects under `state.valid`: fields drawn row by row where the rules hold row by row.

A game with slots of objects (MinAtar Asterix's eight lanes: `slot_taken`, `slot_x`,
`slot_right`, `slot_gold`) keeps one array per property, and its `state.valid` says what a
slot's numbers may be ("a free slot reads 0 in every number"). Drawn independently and
filtered as whole states, such a rule keeps a state only when all slots happen to pass at
once: Asterix's keeps about one draw in 200, and Hypothesis, rejecting the rest one test
case at a time, spent 97% of that example's verify drawing.

Where the rules that name those fields hold index by index (each is true of a state exactly
when it is true of every slot alone), drawing each slot until it passes and putting the
slots together draws the same distribution (the slots' components are independent draws
either way) with a few tries per slot. Whether they hold index by index is tested on the
spot, on random states and on states made of passing rows; where they do not (a rule that
compares slots with each other, or names another field), nothing changes. Either way the
whole state still goes through every rule afterwards, so no state the rules refuse is drawn.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable
from typing import Any

import numpy as np
from hypothesis import assume
from hypothesis import strategies as st

from envport.spec import Bound, PortSpec
from envport.structure import BUILTINS

# Tries per slot before the example is given up (a slot passing half the time fails twenty
# tries in a row about once in a million).
TRIES = 20
# States the index-by-index test tries, of each kind.
PROBES = 128
# Names a rule may use besides the fields.
_KNOWN = {"np", "math", "len", "sum", "min", "max", "any", "all", "abs", "int", "sorted", "list"}

Row = Callable[[dict[str, Any]], bool]


def aligned_fields(spec: PortSpec, small: int) -> tuple[list[str], list[str], int] | None:
    """The bounded 1-D fields of one length n >= 2 (each at most `small` components) that
    the `state.valid` rules naming them name alone, those rules, and n; None when there are
    none such."""
    bounds = spec.state.bounds
    shapes = {
        name: np.broadcast_arrays(np.asarray(b.low, float), np.asarray(b.high, float))[0].shape
        for name, b in bounds.items()
    }
    rules: list[str] = []
    fields: set[str] = set()
    for expression in spec.state.valid:
        names = _names(expression)
        if names is None:
            continue
        own = names - _KNOWN
        if not own or not own <= set(bounds) or own & set(spec.state.declared):
            continue
        lengths = {shapes[name] for name in own}
        if len(lengths) != 1:
            continue
        (shape,) = lengths
        if len(shape) != 1 or not 2 <= shape[0] <= small:
            continue
        rules.append(expression)
        fields |= own
    if not rules:
        return None
    # One group of one length; the rules that name any of them must name only them.
    length = shapes[next(iter(fields))][0]
    if any(shapes[name] != (length,) for name in fields):
        return None
    return sorted(fields), rules, length


# The answers so far, by the rules and the fields' bounds: every check of a run asks.
_HOLDS: dict[str, bool] = {}


def holds_row_by_row(spec: PortSpec, fields: list[str], rules: list[str], length: int) -> bool:
    """Whether every rule is true of a state exactly when it is true of each row alone, on
    random states and on states whose rows each pass (a fixed seed: the same answer each
    run)."""
    key = repr((rules, [spec.state.bounds[name].model_dump_json() for name in fields], length))
    if key not in _HOLDS:
        _HOLDS[key] = _tested(spec, fields, rules, length)
    return _HOLDS[key]


def _tested(spec: PortSpec, fields: list[str], rules: list[str], length: int) -> bool:
    rng = np.random.default_rng(0xA11)
    bounds = {name: spec.state.bounds[name] for name in fields}

    def random_state() -> dict[str, np.ndarray]:
        return {name: _uniform(rng, bound, length) for name, bound in bounds.items()}

    def passing_rows() -> dict[str, np.ndarray] | None:
        rows = []
        for _ in range(length):
            for _ in range(TRIES * 5):
                row = random_state()
                single = {name: values[:1] for name, values in row.items()}
                if all(_true(rule, single) for rule in rules):
                    rows.append(single)
                    break
            else:
                return None
        return {name: np.concatenate([row[name] for row in rows]) for name in fields}

    candidates = [random_state() for _ in range(PROBES)]
    candidates += [s for s in (passing_rows() for _ in range(PROBES)) if s is not None]
    for state in candidates:
        for rule in rules:
            by_rows = all(
                _true(rule, {name: values[i : i + 1] for name, values in state.items()})
                for i in range(length)
            )
            if _true(rule, state) != by_rows:
                return False
    return True


def row_strategy(
    fields: list[str],
    rules: list[str],
    length: int,
    components: Callable[[str], tuple[list[st.SearchStrategy[Any]], Any]],
) -> st.SearchStrategy[dict[str, np.ndarray]]:
    """The fields, drawn slot by slot: each slot's components (`components(name)`: the
    field's per-component strategies and dtype) drawn again until the rules pass on that
    slot alone, at most TRIES times."""
    parts = {name: components(name) for name in fields}

    @st.composite
    def aligned(draw: Callable[[st.SearchStrategy[Any]], Any]) -> dict[str, np.ndarray]:
        rows: list[dict[str, Any]] = []
        for index in range(length):
            for _ in range(TRIES):
                row = {name: draw(parts[name][0][index]) for name in fields}
                single = {name: np.asarray([value]) for name, value in row.items()}
                if all(_true(rule, single) for rule in rules):
                    rows.append(row)
                    break
            else:
                assume(False)
        return {
            name: np.asarray([row[name] for row in rows], dtype=parts[name][1]) for name in fields
        }

    return aligned()


def _names(expression: str) -> set[str] | None:
    try:
        tree = ast.parse(expression, mode="eval")
    except SyntaxError:
        return None
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}


def _true(rule: str, values: dict[str, np.ndarray]) -> bool:
    try:
        return bool(eval(rule, {"__builtins__": BUILTINS}, {"np": np, "math": math, **values}))
    except Exception:
        return False  # a rule that cannot judge a slot alone is no rule of slots


def _uniform(rng: np.random.Generator, bound: Bound, length: int) -> np.ndarray:
    low, high = np.broadcast_arrays(np.asarray(bound.low, float), np.asarray(bound.high, float))
    low, high = np.broadcast_to(low, (length,)), np.broadcast_to(high, (length,))
    if bound.integer:
        return rng.integers(low.astype(np.int64), high.astype(np.int64) + 1)
    return rng.uniform(low, high)
