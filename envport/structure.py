"""Structured state: a reference's pytree as named leaves of fixed shape, and back.

The harness, the wire and the port all see a state as one flat dict of arrays keyed by leaf
path (`hand.player`, `hand.player.length`, `elapsed_steps`): the pytree flattened by path.
A declared list (a hand of cards) becomes its items padded to `capacity` plus a length leaf,
so a JAX port keeps static shapes; this module converts between that and the reference's
own values (Python lists), checks the spec's validity constraints, and names enum codes
for reports (docs/structured-state.md).
"""

from __future__ import annotations

import math
import re
import sys
from types import SimpleNamespace
from typing import Any

import numpy as np

from envport.errors import SpecError
from envport.state_spec import LENGTH_SUFFIX, FieldSpec, StateSpec


def _loaded(name: str, *args: Any, **kwargs: Any) -> Any:
    """`__import__` for numpy's own lazy imports from C (`ndarray.min` imports
    numpy._core._methods through the calling frame's builtins, here an expression's):
    modules already loaded only: an expression loads nothing new."""
    found = sys.modules.get(name)
    if found is None:
        raise ImportError(f"`{name}`: an expression loads no module")
    if not kwargs.get("fromlist") and not (len(args) > 2 and args[2]) and "." in name:
        return sys.modules[name.partition(".")[0]]
    return found


# What a `state.valid` expression may call besides the fields: numpy and a few builtins.
_BUILTINS = {
    "__import__": _loaded,
    "len": len,
    "sum": sum,
    "min": min,
    "max": max,
    "any": any,
    "all": all,
    "abs": abs,
    "int": int,
    "float": float,
    "round": round,
    "sorted": sorted,
    "list": list,
}
# What a `state.valid` expression may call besides numpy, math and the spec's helpers.
BUILTINS = _BUILTINS
_INDEX = re.compile(r"\[[^\]]*\]$")


class OverCapacity(SpecError):
    """The reference holds more items in a list than its declared capacity. A drawn state
    that grows past it is one the contract cannot represent (a rejected draw); a state a
    rollout reaches is a spec error (the capacity is too small)."""


def lists(state: StateSpec) -> dict[str, FieldSpec]:
    return {name: f for name, f in state.declared.items() if f.kind == "list"}


def length_leaf(name: str) -> str:
    return f"{name}{LENGTH_SUFFIX}"


def leaf_names(state: StateSpec) -> list[str]:
    """Every leaf of the flat state, in the spec's order: a list's length after its items."""
    names = []
    for name in state.names:
        names.append(name)
        declared = state.declared.get(name)
        if declared is not None and declared.kind == "list":
            names.append(length_leaf(name))
    return names


def encode(state: StateSpec, raw: dict[str, Any]) -> dict[str, np.ndarray]:
    """The reference's values (lists of any length) as fixed-shape leaves."""
    leaves: dict[str, np.ndarray] = {}
    plan = _leaf_plan(state)
    for name, value in raw.items():
        leaf = plan.get(name)
        if leaf is None:
            leaves[name] = np.array(value)
            continue
        dtype, capacity, pad, item_shape = leaf
        if capacity is None:
            leaves[name] = np.array(value, dtype=dtype)
            continue
        items = np.array(list(value), dtype=dtype)
        if len(items) == 0:
            # An empty list of records (MinAtar's objects, `[x, y, ...]` each) keeps the
            # records' shape, which only its `items` bounds tell.
            items = items.reshape((0, *item_shape))
        if len(items) > capacity:
            raise OverCapacity(
                f"key `state.fields.{name}`: the reference holds {len(items)} items, more than "
                f"its capacity {capacity}; raise `capacity`"
            )
        padded = np.full((capacity, *items.shape[1:]), pad, dtype=dtype or items.dtype)
        padded[: len(items)] = items
        leaves[name] = padded
        leaves[length_leaf(name)] = np.array(len(items), dtype=np.int64)
    return leaves


# Per state spec (kept alive with it, so its id is not reused), each declared field's
# dtype and, for a list, its capacity, pad and item shape: `encode` runs for every state
# the reference reads (92,000 in a Seaquest verify), and reading them from the
# declarations each time was most of its cost.
_PLANS: dict[int, tuple[StateSpec, dict[str, tuple[Any, int | None, Any, tuple[int, ...]]]]] = {}


def _leaf_plan(state: StateSpec) -> dict[str, tuple[Any, int | None, Any, tuple[int, ...]]]:
    found = _PLANS.get(id(state))
    if found is None or found[0] is not state:
        plan = {}
        for name, declared in state.declared.items():
            listed = declared.kind == "list"
            assert not listed or declared.capacity is not None  # the spec requires it
            plan[name] = (
                declared.numpy_dtype,
                declared.capacity if listed else None,
                declared.pad if listed else None,
                declared.item_shape if listed else (),
            )
        found = _PLANS[id(state)] = (state, plan)
    return found[1]


def decode(state: StateSpec, leaves: dict[str, Any]) -> dict[str, Any]:
    """Leaves back to the reference's values: a list's items in use, as Python values."""
    raw: dict[str, Any] = {}
    for name, value in leaves.items():
        if name.endswith(LENGTH_SUFFIX) and name.removesuffix(LENGTH_SUFFIX) in lists(state):
            continue
        declared = state.declared.get(name)
        if declared is None or declared.kind != "list":
            raw[name] = value
            continue
        length = int(np.asarray(leaves[length_leaf(name)]))
        raw[name] = np.asarray(value)[:length].tolist()
    return raw


def canonical(state: StateSpec, leaves: dict[str, Any]) -> dict[str, Any]:
    """The same state with every item past a list's length set to its pad value: items not
    in use are not part of the state, whatever a port leaves there. One env's state or a
    batch of them (lengths [B], items [B, capacity, ...])."""
    declared = lists(state)
    if not declared:
        return leaves
    out = dict(leaves)
    for name, field in declared.items():
        if name not in out or length_leaf(name) not in out:
            continue
        items = np.asarray(out[name])
        length = np.asarray(out[length_leaf(name)])
        batch = length.ndim
        if (
            length.dtype.kind not in "iu"
            or items.ndim <= batch
            or items.shape[:batch] != length.shape
        ):
            continue  # a shape or dtype the comparison reports as it is
        keep = np.arange(items.shape[batch]) < length[..., None]
        keep = keep.reshape(keep.shape + (1,) * (items.ndim - batch - 1))
        out[name] = np.where(keep, items, np.asarray(field.pad).astype(items.dtype))
    return out


def _namespace(state: StateSpec, leaves: dict[str, Any]) -> dict[str, Any]:
    """Fields by name for `state.valid`: dotted names nest, a list reads as its items."""
    root: dict[str, Any] = {}
    for name, value in decode(state, leaves).items():
        *groups, last = name.split(".")
        holder = root
        for group in groups:
            holder = holder.setdefault(group, {})
            if not isinstance(holder, dict):
                break
        else:
            holder[last] = np.asarray(value)

    def spaces(tree: dict[str, Any]) -> dict[str, Any]:
        return {
            k: SimpleNamespace(**spaces(v)) if isinstance(v, dict) else v for k, v in tree.items()
        }

    return spaces(root)


def violated(
    state: StateSpec, leaves: dict[str, Any], helpers: dict[str, Any] | None = None
) -> str | None:
    """The first `state.valid` expression this state breaks, or None. `helpers`: the
    functions of the spec's `state.helpers` file, which the expressions may call."""
    if not state.valid:
        return None
    names = {"np": np, "math": math, **(helpers or {}), **_namespace(state, leaves)}
    for expression in state.valid:
        try:
            ok = eval(expression, {"__builtins__": _BUILTINS}, names)  # the spec's own text
        except Exception as error:
            raise SpecError(
                f"key `state.valid`: `{expression}` failed: {type(error).__name__}: {error}"
            ) from None
        if not bool(ok):
            return expression
    return None


def derived(
    state: StateSpec, leaves: dict[str, Any], helpers: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The drawn state with every `state.derive` field computed from the others, in order
    (each expression sees the fields derived before it). A list field takes the expression's
    items (its length follows); any other keeps its drawn leaf's dtype and shape."""
    out = dict(leaves)
    for name, expression in state.derive.items():
        names = {"np": np, "math": math, **(helpers or {}), **_namespace(state, out)}
        try:
            value = eval(expression, {"__builtins__": _BUILTINS}, names)  # the spec's own text
            declared = state.declared.get(name)
            if declared is not None and declared.kind == "list":
                out |= encode(state, {name: list(value)})
            else:
                drawn = np.asarray(out[name])
                out[name] = np.asarray(value, dtype=drawn.dtype).reshape(drawn.shape)
        except Exception as error:
            raise SpecError(
                f"key `state.derive.{name}`: `{expression}` failed: {type(error).__name__}: {error}"
            ) from None
    return out


def summarised(
    state: StateSpec, stacked: dict[str, Any], helpers: dict[str, Any] | None = None
) -> dict[str, np.ndarray]:
    """`state.summaries` of n states given as stacked leaves (field -> (n, ...)): name ->
    n numbers, each expression evaluated on one state as `state.valid`'s are."""
    if not state.summaries or not stacked:
        return {}
    count = len(next(iter(stacked.values())))
    values: dict[str, list[float]] = {name: [] for name in state.summaries}
    for index in range(count):
        leaves = {name: np.asarray(array)[index] for name, array in stacked.items()}
        names = {"np": np, "math": math, **(helpers or {}), **_namespace(state, leaves)}
        for name, expression in state.summaries.items():
            try:
                value = eval(expression, {"__builtins__": _BUILTINS}, names)  # the spec's text
                values[name].append(float(value))
            except Exception as error:
                raise SpecError(
                    f"key `state.summaries.{name}`: `{expression}` failed: "
                    f"{type(error).__name__}: {error}"
                ) from None
    return {name: np.asarray(found) for name, found in values.items()}


def field_of(leaf: str) -> str:
    """The declared field a report's leaf path belongs to (`hand.player[2]` -> `hand.player`)."""
    while _INDEX.search(leaf):
        leaf = _INDEX.sub("", leaf)
    return leaf


def enum_name(state: StateSpec, leaf: str, value: Any) -> Any:
    """`value` as its enum name where the leaf's field declares an enum, else unchanged; an
    unknown code reads `?(code)` so a report shows it was outside the enum."""
    declared = state.declared.get(field_of(leaf))
    if declared is None or declared.enum is None or isinstance(value, bool | float | str):
        return value
    for name, code in state.enums[declared.enum].items():
        if code == value:
            return name
    return f"?({value})"
