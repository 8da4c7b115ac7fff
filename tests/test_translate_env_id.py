"""`envport translate ENV`: an environment id instead of a spec, through the real command line.

The run infers its spec (`envport init`) into the run directory and goes on: with the
hand-written replay session examples/mountaincar_continuous/replay/jax (labelled so in its
session.json) MountainCarContinuous-v0 is planned, ported to JAX, repaired once and verified
offline. A spec path keeps working as before (tests/test_translate.py::test_usage_errors and
::test_quickstart_translates_cartpole_to_jax_offline run one).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from envport.errors import EnvportError
from envport.pipeline.spec_argument import SpecArgument, classify
from envport.spec import load_spec

from helpers import ROOT
from run_fixtures import clean_env, envport

ENV = "gymnasium:MountainCarContinuous-v0"
SESSION = ROOT / "examples" / "mountaincar_continuous" / "replay" / "jax"


def translate_args(out: Path) -> list[str]:
    model = f"replay:{SESSION}"
    return ["translate", ENV, "--target", "jax", "--model", model, "--out", str(out)]


def only_run(out: Path) -> Path:
    runs = [p for p in out.iterdir() if (p / "run.json").is_file()]
    assert len(runs) == 1, runs
    return runs[0]


def run_state(run: Path) -> dict[str, Any]:
    state: dict[str, Any] = json.loads((run / "run.json").read_text())
    return state


def assert_verified(result: subprocess.CompletedProcess, run: Path) -> None:
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert run_state(run)["status"] == "verified"
    assert "verified" in (run / "reports" / "outcome.md").read_text()
    report = json.loads((run / "reports" / "verify.json").read_text())
    assert report["passed"] and {lv["level"] for lv in report["levels"]} >= {"l2", "l3"}
    # L1 ran in the module checks: every check's latest result is a pass.
    results = run_state(run)["results"].values()
    assert {r["level"] for r in results} >= {"l1", "l2", "l3"}
    assert all(r["passed"] for r in results), [r for r in results if not r["passed"]]


# --- telling a spec from an environment ------------------------------------------------------


def test_an_existing_path_is_a_spec_and_an_env_shape_is_an_env(tmp_path: Path) -> None:
    example = ROOT / "examples" / "cartpole"
    assert classify(str(example)) == SpecArgument(spec=example / "envport.toml")
    assert classify(str(example / "envport.toml")) == SpecArgument(spec=example / "envport.toml")
    for env in (ENV, "MountainCarContinuous-v0", "my_pkg.envs:make_env", "gymnasium:ALE/X-v5"):
        assert classify(env) == SpecArgument(env=env), env
    # A path wins over an env's shape: a directory named like an env id is a spec directory.
    named = tmp_path / "CartPole-v1"
    named.mkdir()
    (named / "envport.toml").write_text((example / "envport.toml").read_text())
    assert classify(str(named)) == SpecArgument(spec=named / "envport.toml")
    # ... and one without a spec in it is the spec error it always was.
    with pytest.raises(EnvportError, match="no such spec file"):
        classify(str(tmp_path))


@pytest.mark.parametrize(
    "text", ["examples/cartpol", "NoSuchEnv-v0", "spec.toml", "gymnasium:", "a b:c"]
)
def test_neither_a_spec_nor_an_env_is_one_line(text: str) -> None:
    with pytest.raises(EnvportError) as error:
        classify(text)
    message = str(error.value)
    assert message.startswith(f"{text}: no such spec file or directory, and not an environment")
    assert "\n" not in message and error.value.exit_code == 2


def test_a_bad_env_id_is_one_line_exit_2_and_leaves_no_run(tmp_path: Path) -> None:
    out = tmp_path / "runs"
    model = f"replay:{SESSION}"
    for text in ("gymnasium:NoSuchEnv-v0", "NoSuchEnv-v0", "no_such_pkg.envs:make"):
        result = envport("translate", text, "--target", "jax", "--model", model, "--out", str(out))
        assert result.returncode == 2, (text, result.stdout, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
        # The env as given (init names a Gymnasium id without its prefix).
        assert result.stderr.startswith("envport: ")
        assert text.removeprefix("gymnasium:") in result.stderr
        assert "Traceback" not in result.stdout + result.stderr
    assert not out.exists() or not any(out.iterdir())


def test_an_env_without_a_model_is_refused_before_inference(tmp_path: Path) -> None:
    out = tmp_path / "runs"
    result = envport("translate", ENV, "--target", "jax", "--out", str(out), env=clean_env())
    assert result.returncode == 2, result.stdout + result.stderr
    assert "no --model given and no API key set" in result.stderr
    assert "an inferred spec has none" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not out.exists()


# --- the whole run, offline ------------------------------------------------------------------


@pytest.mark.slow
def test_translate_an_env_id_to_jax_verifies_offline(tmp_path: Path) -> None:
    out = tmp_path / "runs"
    scratch = tmp_path / "tmp"  # where init's scratch directory goes (and must go away)
    scratch.mkdir()
    result = envport(*translate_args(out), env=clean_env(TMPDIR=str(scratch)))
    run = only_run(out)
    assert_verified(result, run)
    assert f"envport: inferred the spec from {ENV} -> {run / 'envport.toml'}" in result.stdout
    assert run_state(run)["spec_source"] == ENV
    assert not list(scratch.glob("envport-init-*"))
    # The model planned the modules; the frozen spec holds the plan it made.
    planned = load_spec(run / "envport.toml").target("jax")
    assert [m.name for m in planned.modules] == ["physics", "env"]
    events = [json.loads(line) for line in (run / "transcript.jsonl").read_text().splitlines()]
    phases = [e["purpose"]["phase"] for e in events if e["event"] == "prompt"]
    assert phases[0] == "plan" and "repair" in phases
    # The session's first entry module charges the clipped force; L1's out-of-range actions
    # caught it before the repair.
    failures = [
        o["failures"][0]
        for e in events
        if e["event"] == "check"
        for o in e["outcomes"]
        if not o["passed"]
    ]
    assert failures and "reward: expected" in failures[0]


@pytest.mark.slow
def test_an_interrupted_env_id_run_resumes_from_its_frozen_spec(tmp_path: Path) -> None:
    """Ctrl-C once the first module is being checked (the plan is made, the scratch directory
    init wrote to is gone); resume reads the run's frozen spec and verifies."""
    out = tmp_path / "runs"
    process = subprocess.Popen(
        [sys.executable, "-m", "envport", *translate_args(out)],
        cwd=ROOT,
        env=clean_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    seen = []
    try:
        assert process.stdout is not None
        for line in process.stdout:
            seen.append(line)
            if "checking module physics" in line:
                os.killpg(process.pid, signal.SIGINT)
                break
        stdout, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    said = "".join(seen) + stdout + stderr
    assert process.returncode == 130, said
    run = only_run(out)
    assert f"continue with: envport resume {run}" in said and "Traceback" not in said
    assert run_state(run)["status"] == "interrupted"

    resumed = envport("resume", str(run))
    assert "envport: resuming" in resumed.stdout, resumed.stdout + resumed.stderr
    assert_verified(resumed, run)
    asked = [
        json.loads(line)["purpose"]
        for line in (run / "transcript.jsonl").read_text().splitlines()
        if json.loads(line)["event"] == "prompt"
    ]
    assert [p["phase"] for p in asked].count("plan") == 1  # the plan was not made again
