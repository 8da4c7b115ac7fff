"""The reference's slow answers kept on disk for the next verify of the same spec.

What a check draws from the reference alone (L1's examples as the reference stepped them,
l2.reset's sample of worlds) follows from the spec, the seed and the reference's code. A
repair's re-verify, each mutant of a self-check and the same spec's other port draw them
again, and a slow reference pays for them each time. They are the trusted reference's own
answers, so the driver keeps them under envport's cache (`reached/`, which no worker can see
or write), keyed as the `[state.reached]` play is (draws/reached_cache.py: the spec as
loaded, the harness folders, the reference's packages, the installed distributions), by
envport's files that decide them and by `what` they are (with their seed and size).

Only what took `keep_after` seconds or more to draw is kept: a quick draw is made again, so a
test that patches a reference in its own process never meets an answer kept from before.
Under a coverage measure the branch arcs drawing took are kept with it and added back on a
load, so the coverage of a verify that loads is the coverage of the one that drew.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from envport.spec import PortSpec
from envport.verifiers.coverage import branches
from envport.verifiers.draws import reached_cache

T = TypeVar("T")


@dataclass(frozen=True)
class Kept:
    """A kept answer, and the reference's branch arcs drawing it took (None when no
    measure ran: a verify that measures draws it again)."""

    value: Any
    arcs: dict[str, list[tuple[int, int]]] | None


def kept_or_drawn(
    spec: PortSpec,
    drawers: tuple[str, ...],
    what: str,
    draw: Callable[[], T],
    usable: Callable[[Any], bool],
    keep_after: float,
) -> T:
    """The answer kept under this key when `usable` says it is one, else `draw()`, kept
    when it took `keep_after` seconds or more."""
    found = reached_cache.key(spec, drawers, what=what)
    measure = branches.current()
    kept = reached_cache.load(found) if found else None
    if isinstance(kept, Kept) and usable(kept.value):
        if measure is None:
            return kept.value
        if kept.arcs is not None:
            measure.add(measure.context, kept.arcs)
            return kept.value
    before = measure.executed() if measure is not None else None
    started = time.perf_counter()
    value = draw()
    if found and time.perf_counter() - started >= keep_after:
        arcs = None
        if measure is not None and before is not None:
            arcs = branches.taken_since(before, measure.executed())
        reached_cache.store(found, Kept(value, arcs))
    return value
