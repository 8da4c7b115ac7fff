"""Which instance attributes `step` reads: each object of the env's wrapper chain gets a
subclass for the duration of one step whose `__getattribute__` notes a read of an instance
attribute not yet written in that step (read-before-write: a value the step depends on)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np


def chain(env: Any) -> list[tuple[str, Any]]:
    """(attribute path prefix, object) for every wrapper, outermost first, then the base
    env as `unwrapped.` (the path the spec's examples use)."""
    found: list[tuple[str, Any]] = []
    prefix, current = "", env
    base = getattr(env, "unwrapped", env)
    while current is not base and hasattr(current, "env"):
        found.append((prefix, current))
        prefix, current = prefix + "env.", current.env
    found.append(("unwrapped.", base))
    return found


# How deep `objects` follows attributes into the env's own objects (MinAtar's Gymnasium env
# holds the game's wrapper, which holds the game: two levels).
OBJECT_DEPTH = 3


def _package(obj: Any) -> str:
    return type(obj).__module__.partition(".")[0]


def _own_object(value: Any, packages: set[str]) -> bool:
    """A plain object of the env's own package (a game engine the env holds), not a
    wrapper, a space, a generator or a module."""
    return (
        hasattr(value, "__dict__")
        and not isinstance(value, type)
        and not callable(value)
        and _package(value) in packages
        and not hasattr(value, "step")  # an env is the chain's, not an attribute's
    )


def objects(env: Any) -> list[tuple[str, Any]]:
    """The wrapper chain (`chain`), then the objects of the env's own package that it holds
    in attributes, followed `OBJECT_DEPTH` deep (`unwrapped.game.env.`): a game whose state
    lives in an engine object the env keeps is introspected like the env itself."""
    found = chain(env)
    packages = {_package(obj) for _, obj in found} - {"gymnasium", "builtins"}
    seen = {id(obj) for _, obj in found}
    frontier = [found[-1]]
    for _ in range(OBJECT_DEPTH):
        deeper = []
        for prefix, obj in frontier:
            for name, value in vars(obj).items():
                if id(value) not in seen and _own_object(value, packages):
                    seen.add(id(value))
                    deeper.append((f"{prefix}{name}.", value))
        found.extend(deeper)
        frontier = deeper
    return found


def generators(env: Any) -> list[tuple[str, Any]]:
    """(path, generator) for every numpy RandomState or Generator the env's objects hold
    other than Gymnasium's `np_random` (a game's own, drawn from outside Gymnasium's
    seeding), each object once under its first name."""
    found, seen = [], set()
    for prefix, obj in objects(env):
        for name, value in vars(obj).items():
            own = isinstance(value, np.random.RandomState | np.random.Generator)
            if own and "np_random" not in name and id(value) not in seen:
                seen.add(id(value))
                found.append((f"{prefix}{name}", value))
    return found


def generator_state(generator: Any) -> Any:
    if isinstance(generator, np.random.RandomState):
        state = generator.get_state(legacy=False)
        return (state["state"]["key"].tobytes(), state["state"]["pos"], state["has_gauss"])
    return repr(generator.bit_generator.state)


# Gymnasium's wrappers that only check, count, record or render: their attributes are the
# wrapper's bookkeeping (the env checker's `checked_step` and, from 1.4, `_previous_data`;
# the episode statistics' running return and start time), never the env's state. TimeLimit
# is one of them except for its step counter, which decides truncation. Other wrappers
# (a user's, or Gymnasium's StickyAction, FrameStack, Normalize*) may hold state that
# changes what the env answers, so their attributes stay candidates.
BOOKKEEPING_WRAPPERS = frozenset(
    {
        "PassiveEnvChecker",
        "OrderEnforcing",
        "RecordEpisodeStatistics",
        "RecordVideo",
        "HumanRendering",
        "RenderCollection",
        "TimeLimit",
    }
)
TIME_LIMIT_COUNTER = ("TimeLimit", "_elapsed_steps")


def bookkeeping(obj: Any, name: str) -> bool:
    """Whether `obj.name` is a Gymnasium wrapper's own bookkeeping (see BOOKKEEPING_WRAPPERS)."""
    for cls in type(obj).__mro__:
        if cls.__module__.startswith("gymnasium.") and cls.__name__ in BOOKKEEPING_WRAPPERS:
            return (cls.__name__, name) != TIME_LIMIT_COUNTER
    return False


def _watching(cls: type, reads: set[str], written: set[str]) -> type:
    def __getattribute__(self: Any, name: str) -> Any:
        if name not in written and name in object.__getattribute__(self, "__dict__"):
            reads.add(name)
        return cls.__getattribute__(self, name)  # type: ignore[call-arg]

    def __setattr__(self: Any, name: str, value: Any) -> None:
        written.add(name)
        cls.__setattr__(self, name, value)  # type: ignore[call-arg]

    return type(
        cls.__name__, (cls,), {"__getattribute__": __getattribute__, "__setattr__": __setattr__}
    )


@contextmanager
def reads_during(objects: list[Any], reads: list[set[str]]) -> Iterator[None]:
    """Within the block, `reads[i]` collects what `objects[i]` had read from its instance
    dict before writing it."""
    originals = [type(obj) for obj in objects]
    try:
        for obj, cls, seen in zip(objects, originals, reads, strict=True):
            obj.__class__ = _watching(cls, seen, set())
        yield
    finally:
        for obj, cls in zip(objects, originals, strict=True):
            obj.__class__ = cls
