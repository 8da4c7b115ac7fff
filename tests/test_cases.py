"""Proposed cases: a model's targeted test is data the harness runs, with the reference as
the oracle; an unusable proposal is reported, never fatal."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import CARTPOLE, run_envport

EDGE = """
[[case]]
state = { physics = [0.0, 0.0, 0.0, 0.0], elapsed_steps = 497 }
actions = [1, 0, 1, 0]
"""


def cases_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "proposed"
    directory.mkdir()
    (directory / "time_limit.toml").write_text(EDGE)
    (directory / "broken.toml").write_text("state = [\\n")
    (directory / "note.py").write_text("assert False  # proposed Python is never run\\n")
    return directory


def test_known_good_port_passes_proposed_cases(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    done = run_envport(
        "verify",
        str(CARTPOLE),
        "--port",
        str(CARTPOLE / "ports" / "numpy"),
        "--levels",
        "l3",
        "--episodes",
        "5",
        "--cases",
        str(cases_dir(tmp_path)),
        "--json",
        str(report),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    level = json.loads(report.read_text())["levels"][0]
    assert level["level"] == "cases" and level["passed"]
    assert level["episodes"] == 1 and level["steps_compared"] == 3  # truncated at step 500
    assert "1 unusable: broken.toml" in level["mode"]


def test_a_proposed_case_catches_an_off_by_one(numpy_port_copy: Path, tmp_path: Path) -> None:
    env = numpy_port_copy / "env.py"
    env.write_text(env.read_text().replace(">= MAX_STEPS", ">= MAX_STEPS - 1"))
    report = tmp_path / "report.json"
    done = run_envport(
        "verify",
        str(CARTPOLE),
        "--port",
        str(numpy_port_copy),
        "--levels",
        "l3",
        "--episodes",
        "3",
        "--cases",
        str(cases_dir(tmp_path)),
        "--json",
        str(report),
    )
    assert done.returncode == 1
    level = json.loads(report.read_text())["levels"][0]
    divergence = level["divergences"][0]
    assert divergence["message"] == "proposed case time_limit.toml#0"
    assert [f["field"] for f in divergence["fields"]] == ["truncated"]
    assert divergence["step"] == 1 and divergence["start_state"]["elapsed_steps"] == 497
