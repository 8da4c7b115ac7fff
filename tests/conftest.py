"""Fixtures shared by the test suite, and CI's rule that a skip is a failure."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Generator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from envport.heap import collect_in_batches
from envport.verifiers.draws.hypo import draws_independent_of_the_process

from helpers import NUMPY_PORT

# The suite runs on loaded machines (CI's 2 cores shared, a contributor's laptop): a
# Hypothesis deadline or health check ("input generation is slow") fails a test for the
# machine's load, not for anything the test checks. A test's own `@settings` inherits this
# profile for every setting it does not name (tests/test_hypothesis_profile.py holds the
# suite to it).
settings.register_profile("envport-tests", deadline=None, suppress_health_check=list(HealthCheck))
settings.load_profile("envport-tests")

# The suite runs verifies in its own processes (a mutant's, a check's): they collect young
# objects as envport's own processes do (envport/heap.py), not at Python's default, which
# spent a quarter of a Seaquest verify's CPU in the collector.
collect_in_batches()


@pytest.fixture
def numpy_port_copy(tmp_path: Path) -> Path:
    """A writable copy of the known-good NumPy port, for planting faults."""
    destination = tmp_path / "numpy"
    shutil.copytree(NUMPY_PORT, destination, ignore=shutil.ignore_patterns("__pycache__"))
    return destination


@pytest.fixture(autouse=True)
def _property_draws_independent_of_the_process(
    request: pytest.FixtureRequest,
) -> Generator[None, None, None]:
    """The suite's own property tests (`test_prop_*`) are derandomized, but Hypothesis mixes
    constants harvested from every module loaded so far into its draws: run in another order
    (another pytest-xdist process) they drew other examples. Here they draw from the seed alone."""
    if not request.node.path.name.startswith("test_prop_"):
        yield
        return
    with draws_independent_of_the_process():
        yield


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() in {"1", "true", "yes"}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, None]:
    """Under CI=true a skipped test fails: on a fresh install a skip means something the
    suite needs (a package, a browser, bubblewrap, cargo) is missing, which a user would hit."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if _in_ci() and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = f"skipped in CI, which counts as a failure: {reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(
    collector: pytest.Collector,
) -> Generator[None, pytest.CollectReport, None]:
    """A whole module skipped at collection (`pytest.importorskip`) fails in CI too."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if _in_ci() and report.skipped:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = f"skipped in CI, which counts as a failure: {reason}"


# The test files that take minutes, longest first. The suite runs a file to a process
# (`--dist loadfile`) in collection order (`./dev test` passes --no-loadscope-reorder, or
# xdist would hand out the files with the most tests first), so a long file collected late
# ran alone at the end while the other core sat idle (the Seaquest optimisation test, 5
# minutes, last of the slow tier). Started first, they overlap the many short files.
LONG_FILES = (
    "test_minatar_seaquest_mutants.py",
    "test_mutants.py",
    "test_minigrid.py",
    "test_optimize_seaquest.py",
    "test_blackjack.py",
    "test_minatar_seaquest.py",
    "test_optimize_doorkey.py",
    "test_pgx_bridges.py",
    "test_chess_pgx.py",
    "test_examples_replay.py",
    "test_chess_numpy_port.py",
    "test_crafter.py",
    "test_texas_holdem.py",
    "test_interrupts.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Long files first (in LONG_FILES's order), every file's own tests in their order."""
    rank = {name: index for index, name in enumerate(LONG_FILES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


# Where the suite's time goes: with ENVPORT_TEST_TIMES set to a file, every test appends a
# line of its wall seconds and the CPU seconds of its process and of the children it reaped
# (its workers, its CLI runs). A test whose CPU is far below its wall waits on something.
_TIMES = os.environ.get("ENVPORT_TEST_TIMES")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, None, None]:
    if not _TIMES:
        yield
        return
    wall, before = time.perf_counter(), os.times()
    yield
    after = os.times()
    own = after.user + after.system - before.user - before.system
    reaped = after.children_user + after.children_system
    reaped -= before.children_user + before.children_system
    line = f"{time.perf_counter() - wall:.2f}\t{own:.2f}\t{reaped:.2f}\t{item.nodeid}\n"
    with open(_TIMES, "a") as log:
        log.write(line)
