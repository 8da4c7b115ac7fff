"""Hypothesis in the suite holds on a loaded machine: no deadline, no health check that a
slow draw trips ("input generation is slow" failed a fresh machine's `./dev test`)."""

from __future__ import annotations

import re
from pathlib import Path

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
