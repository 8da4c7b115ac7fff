"""Bounds coverage: the share of L3's reference states outside `[state.bounds]`, counted on
played columns, and `envport verify --strict-bounds` on a real example env."""

from __future__ import annotations

import json
import shutil
import threading
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from envport.spec import Bound, PortSpec, load_spec
from envport.verifiers.coverage.bounds import WARN_SHARE, Coverage
from envport.verifiers.selfcheck import apply_mutant, load_mutants
from envport.verifiers.verify import VerifyOptions, verify

from helpers import ROOT, run_envport

PENDULUM = ROOT / "examples" / "pendulum"


def spec_with(bounds: dict[str, Bound]) -> PortSpec:
    spec = load_spec(PENDULUM)
    return spec.model_copy(update={"state": spec.state.model_copy(update={"bounds": bounds})})


def columns() -> dict[str, np.ndarray]:
    """Six states: a 2-element float field, an integer counter, a 2x2 grid and a name."""
    physics = np.array(
        [[0.0, 0.0], [-1.0, 2.0], [1.5, 0.0], [0.0, -2.5], [np.nan, 0.0], [1.0, -2.0]]
    )
    counter = np.array([0, 10, 11, 3, 5, -1], dtype=np.int64)
    grid = np.zeros((6, 2, 2), dtype=np.int32)
    grid[1, 1, 0] = 2  # one element of one state past the high bound
    grid[3, 0, 1] = -1  # and one below the low bound
    return {"physics": physics, "counter": counter, "grid": grid, "unbounded": np.arange(6.0)}


BOUNDS = {
    "physics": Bound(low=[-1.0, -2.0], high=[1.0, 2.0]),
    "counter": Bound(low=0, high=10, integer=True),
    "grid": Bound(low=0, high=1, integer=True),
}


def test_states_outside_are_counted_per_field_and_overall() -> None:
    coverage = Coverage.of(spec_with(BOUNDS))
    coverage.add(columns(), episodes=2)
    # physics: row 2 (1.5 > 1), row 3 (-2.5 < -2), row 4 (NaN is not within); the edges
    # themselves (rows 1 and 5) are inside.
    assert coverage.fields["physics"].outside == 3
    # counter: 11 > 10 and -1 < 0; an integer field compared as it is.
    assert coverage.fields["counter"].outside == 2
    # grid: any element outside puts its state outside (rows 1 and 3).
    assert coverage.fields["grid"].outside == 2
    # Overall: a state outside for any field (rows 1, 2, 3, 4, 5).
    assert (coverage.states, coverage.outside, coverage.episodes) == (6, 5, 2)
    assert "unbounded" not in coverage.fields
    assert coverage.share("physics") == pytest.approx(0.5)
    stats = coverage.statistics()
    physics = stats["fields"]["physics"]
    # The extremes per element, NaN skipped.
    assert physics["reached_low"] == [-1.0, -2.5] and physics["reached_high"] == [1.5, 2.0]
    assert stats["fields"]["counter"]["reached_low"] == [-1.0]
    assert stats["fields"]["grid"]["reached_high"] == [0.0, 0.0, 2.0, 0.0]


def test_chunks_from_several_lanes_add_up() -> None:
    coverage = Coverage.of(spec_with(BOUNDS))
    data = columns()
    threads = [threading.Thread(target=coverage.add, args=(data, 2)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert (coverage.states, coverage.outside, coverage.episodes) == (24, 20, 8)
    assert coverage.fields["physics"].outside == 12


def test_the_level_warns_and_fails_only_when_strict() -> None:
    # No `grid` column: a bounded field the states do not hold is left out, not an error.
    inside = {"physics": np.zeros((200, 2)), "counter": np.zeros(200, int)}
    coverage = Coverage.of(spec_with(BOUNDS))
    inside["physics"][0] = [5.0, 0.0]  # 1 of 200: 0.5%, under the warning share
    coverage.add(inside)
    assert coverage.share("physics") < WARN_SHARE
    assert coverage.over() == [] and coverage.warnings() == []
    assert coverage.level(strict=True).passed
    inside["physics"][:7] = [5.0, 0.0]  # 7 of 200 more: 8 of 400 in all, 2%
    coverage.add(inside)
    assert coverage.over() == ["physics"]
    (warning,) = coverage.warnings()
    assert warning.startswith("state.bounds.physics: 2.0% of the 400 states")
    assert "[-1, 1] x [-2, 2]" in warning and "(reached [0, 5] x [0, 0])" in warning
    level = coverage.level(strict=False)
    assert level.passed and level.name == "l3.bounds"
    assert "physics 2.00%" in level.summary() and "never tested at L1/L2" in level.summary()
    assert not coverage.level(strict=True).passed


def narrow_pendulum(tmp_path: Path, edge: str = "3.0") -> Path:
    """The Pendulum example with its angle bounded to +-edge rad (3: most of play outside)."""
    example = tmp_path / "pendulum"
    shutil.copytree(PENDULUM, example, ignore=shutil.ignore_patterns("__pycache__"))
    spec = example / "envport.toml"
    text = spec.read_text(encoding="utf-8")
    wide = "physics = { low = [-83.0, -9.0], high = [83.0, 9.0] }"
    assert wide in text
    spec.write_text(text.replace(wide, wide.replace("83.0", edge)), encoding="utf-8")
    return example


def verify_l3(example: Path, tmp_path: Path, *extra: str) -> tuple[int, str, dict]:
    out = tmp_path / "report.json"
    done = run_envport(
        "verify",
        str(example),
        "--port",
        str(example / "ports" / "numpy"),
        "--levels",
        "l3",
        "--episodes",
        "12",
        "--json",
        str(out),
        *extra,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, done.stdout, json.loads(out.read_text())


@pytest.mark.slow
def test_strict_bounds_fails_a_spec_whose_bounds_miss_what_play_reaches(tmp_path: Path) -> None:
    narrow = narrow_pendulum(tmp_path)
    code, stdout, report = verify_l3(narrow, tmp_path)
    # Without --strict-bounds: a warning, the coverage reported, and the port verified.
    assert code == 0, stdout
    assert "warn spec: state.bounds.physics:" in stdout
    assert "pass l3.bounds:" in stdout and "never tested at L1/L2" in stdout
    bounds = next(lv for lv in report["levels"] if lv["mode"] == "bounds")
    assert bounds["mode"] == "bounds" and bounds["statistics"]["fields"]["physics"]["share"] > 0.3

    junit = tmp_path / "junit.xml"
    code, stdout, report = verify_l3(narrow, tmp_path, "--strict-bounds", "--junit", str(junit))
    assert code == 1, stdout
    assert "FAIL l3.bounds:" in stdout and "above 1%: physics (--strict-bounds)" in stdout
    assert not report["passed"]
    case = ET.parse(junit).getroot().find("testcase[@name='l3.bounds']")
    assert case is not None and case.find("failure") is not None


@pytest.mark.slow
def test_strict_bounds_passes_the_pendulum_example_as_measured(tmp_path: Path) -> None:
    code, stdout, report = verify_l3(PENDULUM, tmp_path, "--strict-bounds")
    assert code == 0, stdout
    assert "warn spec" not in stdout and "pass l3.bounds: 0 of" in stdout
    assert (
        next(lv for lv in report["levels"] if lv["mode"] == "bounds")["statistics"]["outside"] == 0
    )


@pytest.mark.slow
def test_a_port_that_wraps_the_angle_once_is_caught_at_l1_only_with_the_measured_bounds(
    tmp_path: Path,
) -> None:
    (mutant,) = [m for m in load_mutants(PENDULUM) if m.id == "numpy-wrap-once"]
    port = apply_mutant(mutant, PENDULUM / "ports" / "numpy", tmp_path / "port")
    options = VerifyOptions(levels=("l1",), target="numpy", shrink=False)
    measured = verify(str(PENDULUM), str(port), options)
    failed = {level.name for level in measured.levels if not level.passed}
    assert "l1.physics.cost" in failed, measured.text()
    # The old bounds (|theta| <= 7, within the three half-turns one wrap gets right) hid it.
    old = narrow_pendulum(tmp_path, "7.0")
    assert verify(str(old), str(port), options).passed
