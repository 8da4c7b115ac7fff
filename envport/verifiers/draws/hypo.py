"""The Hypothesis profile envport's levels run under.

CI profile: reproducible (seeded, no example database), no deadline so JIT compilation
cannot fail a check, every health check off (a slow port is not a bug), and a bound on
shrinking time so a failing check still answers within seconds.
"""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import hypothesis.internal.conjecture.engine
import hypothesis.internal.conjecture.providers
from hypothesis import HealthCheck, Phase, settings
from hypothesis.configuration import set_hypothesis_home_dir
from hypothesis.errors import HypothesisWarning
from hypothesis.internal.constants_ast import Constants
from hypothesis.reporting import with_reporter

from envport.cache_home import cache_home
from envport.io import profile

# One failing check's shrinking, at most; a run's, over all its failing checks; and what a
# check gets when the run's is spent (enough for a quick port's first big cuts). pgx's
# Seaquest bridge fails four of L1's parts: its first failure shrinks to empty lists within
# 8 s, and a run's 20 s (15 for the first) cost 7 s more for later failures only less
# shrunk (L1 alone: 52.2 s against 45.0 s at 8, 12 and 1).
SHRINK_SECONDS = 10
RUN_SHRINK_SECONDS = 12
LEAST_SHRINK_SECONDS = 1


@dataclass
class ShrinkBudget:
    """The shrinking time a verify run has left. A port with one bug fails several checks
    (pgx's Seaquest fails four of L1's parts on one difference), and each shrinking to its
    bound made a diverged verdict cost a minute more than the checks: the first failing
    check shrinks fully, the later ones with what is left."""

    left: float


_budget: ContextVar[ShrinkBudget | None] = ContextVar("shrink_budget", default=None)


@contextmanager
def run_shrink_budget(seconds: float = RUN_SHRINK_SECONDS) -> Iterator[ShrinkBudget]:
    """Within this context every `shrink_time_limit` draws on one budget of `seconds`."""
    budget = ShrinkBudget(seconds)
    token = _budget.set(budget)
    try:
        yield budget
    finally:
        _budget.reset(token)


def keep_caches_out_of_cwd() -> None:
    """Hypothesis keeps caches of its own (constants found in source files) under
    ./.hypothesis unless told otherwise; a verify run leaves the directory it runs in as it
    found it, so they go under envport's cache (a user's HYPOTHESIS_STORAGE_DIRECTORY wins)."""
    if not os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        set_hypothesis_home_dir(cache_home() / "hypothesis")


def hypothesis_settings(examples: int, shrink: bool = True) -> settings:
    """The CI profile: reproducible (seeded, no example database), no deadline so JIT
    compilation cannot fail a check, every health check off (slow ports are not bugs)."""
    keep_caches_out_of_cwd()
    return settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=False,
        suppress_health_check=list(HealthCheck),
        print_blob=False,
        report_multiple_bugs=False,
        # Without shrinking a failure is reported as first found: for the mutation
        # self-check, which needs verdicts, not minimal examples. Never Hypothesis's
        # explain phase: after shrinking it runs the check again on variations of the
        # example to mark the parts that do not matter, which a divergence report never
        # shows, and each run steps the reference and the port.
        phases=tuple(p for p in Phase if p != Phase.explain and (shrink or p != Phase.shrink)),
    )


@contextmanager
def captured_reports() -> Iterator[list[str]]:
    """Hypothesis's own report of a failure (its reproduction steps) goes into the divergence
    report, not onto the user's terminal."""
    lines: list[str] = []
    with with_reporter(lambda value: lines.append(str(value))), warnings.catch_warnings():
        # A state of three 10x10 maps makes a long repr: Hypothesis warns each time it
        # writes one down, which says nothing to a user of envport.
        warnings.filterwarnings("ignore", "Generating overly large repr", HypothesisWarning)
        yield lines


@contextmanager
def shrink_time_limit(seconds: int = SHRINK_SECONDS) -> Iterator[None]:
    """Bound the time Hypothesis spends shrinking a failure (its default is five minutes,
    too long for a check that runs every repair): `seconds`, or less inside a run whose
    budget is partly spent (never under `LEAST_SHRINK_SECONDS`). The time inside is charged
    to the run's budget when a failure leaves it (Hypothesis found and shrank one); a block
    that ends quietly shrank nothing (L2's first, recording pass over its sequences). Uses a
    Hypothesis internal where present."""
    budget = _budget.get()
    bound = seconds if budget is None else max(LEAST_SHRINK_SECONDS, min(seconds, budget.left))
    engine = hypothesis.internal.conjecture.engine
    previous: int | None = getattr(engine, "MAX_SHRINKING_SECONDS", None)
    if previous is not None:
        engine.MAX_SHRINKING_SECONDS = bound  # type: ignore[assignment]
    started = time.perf_counter()
    try:
        yield
    except BaseException:
        if budget is not None:
            budget.left = max(0.0, budget.left - (time.perf_counter() - started))
        raise
    finally:
        if previous is not None:
            engine.MAX_SHRINKING_SECONDS = previous


def _no_local_constants() -> Constants:
    return Constants()


@contextmanager
def draws_independent_of_the_process() -> Iterator[None]:
    """Make a check's draws a function of its seed alone, not of what else ran before it.

    Hypothesis mixes into its draws, now and then, constants it harvests from the source of
    every "local" (not stdlib, not site-packages) module loaded in the process: envport's
    own modules (installed editable), an example's harness, whatever a test imported. So
    L2 run after L1 (which loaded more modules) drew other inputs than `verify --levels l2`
    alone, and the replay command a divergence prints did not reproduce it. Inside this
    context that harvested pool is empty. Hypothesis's built-in constants (nan, inf, zero,
    integer and float boundaries) are a separate, fixed pool and are still drawn: they help
    find bugs and do not depend on the process. Nothing of the reference is lost: it lives in
    site-packages, which Hypothesis never harvests; the constants it compares against are
    drawn by envport itself (`Draws`), from the spec and the reference, in every process.

    Patched at the provider module rather than through a custom backend: a backend other
    than "hypothesis" turns off the engine's tree-guided generation, and that tree draws
    through the default provider anyway. Uses Hypothesis internals where present (a test
    pins the behaviour, so an upgrade that moves them fails loudly).

    Every Hypothesis run of a level passes through here, so its time is the profile's
    "drawing" phase: what the reference, the port and the judging spend inside it is
    taken out by their own phases, leaving Hypothesis's own work."""
    with profile.phase("drawing"):
        yield from _draws_independent()


def _draws_independent() -> Iterator[None]:
    providers = hypothesis.internal.conjecture.providers
    harvest = getattr(providers, "_get_local_constants", None)
    cache = getattr(providers, "CONSTANTS_CACHE", None)
    if harvest is None or cache is None:
        yield
        return
    # The cache holds (built-in, harvested) pools per draw's constraints: filled before this
    # context (harvested pool full) or inside it (empty), it is wrong on the other side.
    cache.cache.clear()
    providers._get_local_constants = _no_local_constants
    try:
        yield
    finally:
        providers._get_local_constants = harvest
        cache.cache.clear()


class PortGone(BaseException):
    """Carries a PortError out of a Hypothesis test: a port that crashed or hung is not a
    counterexample to shrink. Hypothesis lets BaseExceptions through at once."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


@contextmanager
def port_failures_abort() -> Iterator[None]:
    """Inside a check: turn a PortError into PortGone."""
    from envport.errors import PortError

    try:
        yield
    except PortError as error:
        raise PortGone(error) from None
