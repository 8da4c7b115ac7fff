"""State fields by introspection: the attributes of the env, its wrappers and the objects of
its own package they hold (a game engine: `unwrapped.game.env.ball_x`) that `step`
reads (before writing them) and whose value differs between states an episode steps from.

An attribute that changes but `step` never reads (Pendulum's `last_u`, the toy-text
`lastaction`) only feeds rendering or bookkeeping: not state. One that `step` reads but that
never changes is a constant of the reference (its kwargs set it; the port is written for
those kwargs), not state. Only values the harness can hold (numbers, booleans, fixed-shape
numeric arrays or tuples) can be fields; anything else ends inference with one line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from envport.init.errors import InitError
from envport.init.watch import bookkeeping, reads_during
from envport.init.watch import objects as held_objects

# Names the spec's tolerance table uses for outputs: a field may not take one.
_RESERVED = {"obs", "reward", "terminated", "truncated", "noise"}


@dataclass
class Field:
    name: str
    path: str
    integer: bool
    shape: tuple[int, ...]
    owner: str  # the class holding the attribute, for comments


@dataclass
class Discovery:
    fields: list[Field]
    constants: list[str] = field(default_factory=list)  # read by step, never changing
    unread: list[str] = field(default_factory=list)  # changing, never read by step
    states: int = 0
    episodes: int = 0


class _Opaque:
    """Stands for a value the harness cannot hold (a generator, a space, a dict)."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Opaque)

    def __hash__(self) -> int:
        return 0


def snapshot(value: Any) -> Any:
    """A copy of a data value (number, bool, None, str, numeric array, list/tuple of
    those), else an opaque marker."""
    if value is None or isinstance(value, bool | int | float | str | np.generic):
        return value
    if isinstance(value, np.ndarray):
        return value.copy() if value.dtype != object else _Opaque()
    if isinstance(value, list | tuple):
        items = [snapshot(v) for v in value]
        return _Opaque() if any(isinstance(i, _Opaque) for i in items) else type(value)(items)
    return _Opaque()


def same(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        try:
            x, y = np.asarray(a), np.asarray(b)
            return bool(np.array_equal(x, y, equal_nan=x.dtype.kind == y.dtype.kind == "f"))
        except (TypeError, ValueError):
            return False
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def _field_name(attr: str, taken: set[str]) -> str:
    # The attribute's own name without leading underscores; `state` becomes `physics`, as
    # the examples call it: a field called `state` would read as the whole state.
    name = attr.lstrip("_") or attr
    if name == "state":
        name = "physics"
    if name in _RESERVED:
        name += "_state"
    base, n = name, 2
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    return name


def _check_holdable(path: str, values: list[Any]) -> tuple[bool, tuple[int, ...]]:
    """(integer, shape) of a field's values, or an InitError naming what defeats it."""
    bridge = (
        "write a bridge (`[state] read`/`write` = `package.module:function`) that packs it "
        "into fixed-shape numeric arrays"
    )
    if any(isinstance(v, _Opaque | str) or v is None for v in values):
        kinds = sorted({type(v).__name__ for v in values})
        raise InitError(
            f"state attribute `{path}` changes under step but holds {'/'.join(kinds)} values, "
            f"not numbers: {bridge}"
        )
    holed = [v for v in values if isinstance(v, list | tuple) and any(i is None for i in v)]
    if holed:
        filled = next((i for v in holed for i in v if i is not None), None)
        item = f"None or {type(filled).__name__} items" if filled is not None else "None items"
        raise InitError(
            f"state attribute `{path}` is a {type(holed[0]).__name__} of {len(holed[0])} slots "
            f"holding {item} (objects that come and go), not a fixed-shape field: write a "
            "bridge (`[state] read`/`write` = `package.module:function`) that packs each "
            "slot into numbers with a flag saying whether it is taken"
        )
    lengths = {len(v) for v in values if isinstance(v, list | tuple)}
    if len(lengths) > 1:
        kind = type(next(v for v in values if isinstance(v, list | tuple))).__name__
        raise InitError(
            f"state attribute `{path}` is a {kind} whose length changes under step "
            f"({min(lengths)} to {max(lengths)} items), not a fixed-shape field: {bridge}"
        )
    try:
        arrays = [np.asarray(v) for v in values]
    except ValueError:
        raise InitError(f"state attribute `{path}` is a ragged sequence: {bridge}") from None
    shapes = {a.shape for a in arrays}
    if len(shapes) > 1 or any(a.dtype.kind not in "biuf" for a in arrays):
        raise InitError(f"state attribute `{path}` changes shape or is not numeric: {bridge}")
    integer = all(a.dtype.kind in "biu" for a in arrays)
    return integer, shapes.pop()


def discover(env: Any, actions: list[list[Any]], seeds: list[int]) -> Discovery:
    """Play the given action sequences from `reset(seed)` and classify every attribute of
    the env's wrapper chain (see the module's docstring)."""
    links = held_objects(env)
    watched = [obj for _, obj in links]
    reads: list[set[str]] = [set() for _ in watched]
    seen: list[dict[str, list[Any]]] = [{} for _ in watched]
    states = 0
    for seed, sequence in zip(seeds, actions, strict=True):
        env.reset(seed=seed)
        for action in sequence:
            states += 1
            for obj, values in zip(watched, seen, strict=True):
                for name, value in vars(obj).items():
                    if not bookkeeping(obj, name):
                        values.setdefault(name, []).append(snapshot(value))
            with reads_during(watched, reads):
                _, _, terminated, truncated, _ = env.step(action)
            if terminated or truncated:
                break
    fields: list[Field] = []
    constants: list[str] = []
    unread: list[str] = []
    taken: set[str] = set()
    for (prefix, obj), read, values in zip(links, reads, seen, strict=True):
        for name, history in values.items():
            path = f"{prefix}{name}"
            changes = any(not same(v, history[0]) for v in history[1:])
            if name in read and not changes:
                if not isinstance(history[0], _Opaque):  # a wrapped env, a space: not data
                    constants.append(path)
            elif changes and name not in read:
                unread.append(path)
            elif changes:
                integer, shape = _check_holdable(path, history)
                fields.append(
                    Field(_field_name(name, taken), path, integer, shape, type(obj).__name__)
                )
                taken.add(fields[-1].name)
    if not fields:
        raise InitError(
            "no attribute of the env, its wrappers or the objects of its own package they "
            "hold changes under step: its state is not plain attributes; write a bridge "
            "(`[state] read`/`write`)"
        )
    return Discovery(fields, constants, unread, states, len(seeds))
