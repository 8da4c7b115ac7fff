"""The new examples' replay sessions translate offline: Acrobot to JAX, FrozenLake to NumPy.

Each session's answers are hand-written (labelled so in session.json): a first answer with a
realistic bug, the harness's divergence, one repair, then every level passes. The examples
are copied with smaller level budgets so the runs take seconds, not minutes.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from envport.llm.replay import read_session

from helpers import ROOT

KEY_ENVS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_BASE_URL")
# (pattern in envport.toml, replacement): fewer examples and episodes than the examples ask.
FAST = [
    (r"(\[levels\.l2\]\nexamples = )\d+", r"\g<1>10"),
    (r"(\[levels\.l3\]\nepisodes = )\d+", r"\g<1>15"),
]


def fast_copy(name: str, destination: Path, l1_examples: int) -> Path:
    source = ROOT / "examples" / name
    copy = destination / name
    shutil.copytree(source, copy, ignore=shutil.ignore_patterns("ports", "__pycache__"))
    spec = copy / "envport.toml"
    text = spec.read_text()
    l1 = (r"(\[levels\.l1\]\nexamples = )\d+", rf"\g<1>{l1_examples}")
    for pattern, replacement in [l1, *FAST]:
        text, count = re.subn(pattern, replacement, text)
        assert count == 1, pattern
    spec.write_text(text)
    return copy


def translate(spec: Path, target: str, out: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in KEY_ENVS}
    words = ["translate", str(spec), "--target", target, "--out", str(out)]
    return subprocess.run(
        [sys.executable, "-m", "envport", *words],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env={**env, "PYTHONUNBUFFERED": "1"},
    )


def check_failures(run: Path) -> list[str]:
    found = []
    for line in (run / "transcript.jsonl").read_text().splitlines():
        event: dict[str, Any] = json.loads(line)
        if event["event"] == "check":
            found += [o["failures"][0] for o in event["outcomes"] if not o["passed"]]
    return found


@pytest.mark.parametrize("name, target", [("acrobot", "jax"), ("frozenlake", "numpy")])
def test_sessions_are_labelled_hand_written(name: str, target: str) -> None:
    session = read_session(ROOT / "examples" / name / "replay" / target)
    assert session.entries and {e.source for e in session.entries} == {"hand-written"}


@pytest.mark.slow
@pytest.mark.parametrize(
    "name, target, l1_examples, caught",
    [
        # Acrobot's goal is reached from a third of the drawn states: 40 examples find it.
        ("acrobot", "jax", 40, "reward: expected 0, got -1"),
        # FrozenLake's bug needs the goal cell drawn: the spec's 200 examples (NumPy: cheap).
        ("frozenlake", "numpy", 200, "reward: expected 0, got 1"),
    ],
)
def test_example_translates_offline_from_its_replay_session(
    name: str, target: str, l1_examples: int, caught: str, tmp_path: Path
) -> None:
    spec = fast_copy(name, tmp_path, l1_examples)
    result = translate(spec, target, tmp_path / "runs")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "(hand-written answers)" in result.stdout
    (run,) = (tmp_path / "runs").iterdir()
    report = json.loads((run / "reports" / "verify.json").read_text())
    assert report["passed"] and {lv["level"] for lv in report["levels"]} >= {"l2", "l3"}
    # The session's first answer has a bug; the harness caught it, one repair fixed it.
    failures = check_failures(run)
    assert failures and caught in failures[0]
    assert json.loads((run / "run.json").read_text())["status"] == "verified"
