"""Which instance attributes `step` reads: each object of the env's wrapper chain gets a
subclass for the duration of one step whose `__getattribute__` notes a read of an instance
attribute not yet written in that step (read-before-write: a value the step depends on)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


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
