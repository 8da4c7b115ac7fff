"""Hypothesis in the suite holds on a loaded machine: no deadline, no health check that a
slow draw trips ("input generation is slow" failed a fresh machine's `./dev test`)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

TESTS = Path(__file__).parent


def test_the_suite_runs_hypothesis_without_deadline_or_health_checks() -> None:
    assert settings.default.deadline is None
    assert set(settings.default.suppress_health_check) == set(HealthCheck)


def test_no_test_file_sets_a_deadline_or_narrows_the_health_checks_it_suppresses() -> None:
    offending = []
    for path in sorted(TESTS.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if "hypothesis" not in text or path.name == Path(__file__).name:
            continue
        for match in re.finditer(r"\bdeadline\s*=\s*([^,)\n]+)", text):
            if match.group(1).strip() != "None":
                offending.append(f"{path.name}: deadline={match.group(1).strip()}")
        # A test's own list replaces the profile's: it must keep the load-sensitive one.
        for match in re.finditer(r"suppress_health_check\s*=\s*(\[[^\]]*\]|[^,)\n]+)", text):
            if "too_slow" not in match.group(1) and not match.group(1).startswith(
                "list(HealthCheck"
            ):
                offending.append(f"{path.name}: suppress_health_check={match.group(1)}")
    assert not offending, offending


def test_a_runs_failing_checks_share_one_shrinking_budget() -> None:
    """The first failing check of a run shrinks up to its own bound; the next one only with
    what the run has left, and never less than the floor (load can only make it smaller)."""
    import time

    import hypothesis.internal.conjecture.engine as engine

    from envport.verifiers.draws.hypo import (
        LEAST_SHRINK_SECONDS,
        run_shrink_budget,
        shrink_time_limit,
    )

    class Found(Exception):
        """A failure Hypothesis found and shrank, leaving the block."""

    outside = engine.MAX_SHRINKING_SECONDS
    with run_shrink_budget(10) as budget:
        # A block that ends quietly shrank nothing, and costs the budget nothing.
        with shrink_time_limit(15):
            time.sleep(0.2)
        assert budget.left == 10
        with pytest.raises(Found), shrink_time_limit(15):
            assert engine.MAX_SHRINKING_SECONDS == 10
            time.sleep(0.5)
            raise Found
        assert budget.left <= 9.5
        with shrink_time_limit(15):
            assert LEAST_SHRINK_SECONDS <= engine.MAX_SHRINKING_SECONDS <= 9.5
        budget.left = 0.0
        with shrink_time_limit(15):
            assert engine.MAX_SHRINKING_SECONDS == LEAST_SHRINK_SECONDS
    # Outside a run a check has its own bound, and the engine's is restored after.
    with shrink_time_limit(15):
        assert engine.MAX_SHRINKING_SECONDS == 15
    assert outside == engine.MAX_SHRINKING_SECONDS


def test_a_failing_check_is_not_run_again_to_explain_its_shrunk_example() -> None:
    """Hypothesis's explain phase runs a failing test again on variations of its shrunk
    example, to mark the parts that do not matter; a divergence report never shows that,
    and every such run steps the reference and the port. After the minimal example is found,
    the only runs left are its replays."""
    from hypothesis import given
    from hypothesis import strategies as st

    from envport.verifiers.draws.hypo import hypothesis_settings

    seen: list[tuple[int, int]] = []

    @hypothesis_settings(200)
    @given(st.integers(0, 1000), st.integers(0, 1000))
    def check(x: int, y: int) -> None:
        seen.append((x, y))
        assert x <= 10

    with pytest.raises(AssertionError):
        check()
    # Shrinking only makes an example smaller: once (11, 0) is found, a run with x = 11 and
    # another y is the explain phase varying the part that does not matter.
    after = seen[seen.index((11, 0)) :]
    assert [(x, y) for x, y in after if x == 11 and y != 0] == []
