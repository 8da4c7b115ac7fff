"""The verdict says what was checked: "verified" only when every check showed everything it
can; otherwise "verified with gaps" and the list, in the terminal, JSON, JUnit, run.json
and the HTML report, and `--strict` makes a gap a failure (envport.gaps)."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from envport.gaps import Gap, GapKind, gap_lines, verdict_word
from envport.pipeline.checks import GAPS_CHECK, _outcomes
from envport.pipeline.decision.verdict import verified
from envport.runs.state import CheckOutcome, RunState
from envport.verifiers.coverage.endings import ending_gaps
from envport.verifiers.reporting.divergence import LevelResult, VerifyReport
from envport.verifiers.reporting.junit import junit_xml

from helpers import CARTPOLE, ROOT, run_envport

FROZENLAKE = ROOT / "examples" / "frozenlake"
NO_READS = Gap(check="l2.interaction", kind=GapKind.NO_STATE_READS, detail="no getter")


def test_the_verdict_word_tells_full_from_partial_from_failed() -> None:
    assert verdict_word(False, []) == "verified"
    assert verdict_word(False, [NO_READS]) == "verified with gaps"
    assert verdict_word(False, [NO_READS], strict=True) == "NOT VERIFIED (--strict: gaps)"
    assert verdict_word(True, [NO_READS], strict=True) == "DIVERGED"
    # Two levels reporting the same gap list it once.
    assert gap_lines([NO_READS, NO_READS]) == ["l2.interaction: no state reads; no getter"]


def _report(strict: bool) -> VerifyReport:
    level = LevelResult(level="l2", mode="interaction", passed=True, gaps=[NO_READS])
    return VerifyReport(
        spec="s", port="p", passed=not strict, levels=[level], gaps=[NO_READS], strict=strict
    )


def test_junit_lists_gaps_as_skipped_or_under_strict_as_failures() -> None:
    loose = ET.fromstring(junit_xml(_report(strict=False)))
    case = loose.find("testcase[@classname='envport.gaps']")
    assert case is not None and case.find("skipped") is not None
    assert loose.get("failures") == "0" and loose.get("skipped") == "1"
    strict = ET.fromstring(junit_xml(_report(strict=True)))
    case = strict.find("testcase[@classname='envport.gaps']")
    assert case is not None and case.find("failure") is not None
    assert strict.get("failures") == "1"


def test_a_strict_translate_check_fails_on_gaps_and_asks_to_close_them(tmp_path: Path) -> None:
    outcomes = _outcomes("composed", _report(strict=True), "load", tmp_path)
    failed = [o for o in outcomes if not o.passed]
    assert [o.name for o in failed] == [GAPS_CHECK]
    assert "close this gap" in failed[0].failures[0]
    # Without --strict the passing level carries its gap, and nothing fails.
    loose = _outcomes("composed", _report(strict=False), "load", tmp_path)
    assert all(o.passed for o in loose)
    assert [g for o in loose for g in o.gaps] == [NO_READS]


def test_a_verified_run_with_gaps_says_so_in_its_state() -> None:
    state = RunState(run_id="r", spec_source="s", spec_name="n", target="jax", model="replay:x")
    state.results = {
        "l2.interaction": CheckOutcome(
            name="l2.interaction", scope="composed", level="l2", passed=True, gaps=[NO_READS]
        )
    }
    done = verified(state.model_copy(deep=True)).state
    assert done.status == "verified" and done.gaps == [NO_READS]
    assert done.verdict == "verified with gaps" and "with 1 gap" in done.reason
    state.results["l2.interaction"].gaps = []
    assert verified(state.model_copy(deep=True)).state.verdict == "verified"


def _rollout(endings: dict[str, int], level: str = "l3", mode: str = "free") -> LevelResult:
    return LevelResult(level=level, mode=mode, passed=True, episodes=10, endings=endings)


def test_an_ending_the_reference_can_produce_and_no_rollout_reached_is_a_gap() -> None:
    short = [_rollout({"terminated": 10}), _rollout({"terminated": 10}, mode="resync")]
    (gap,) = ending_gaps(short, time_limit=200)
    assert gap.kind is GapKind.ENDING_NOT_REACHED and "step 200" in gap.detail
    assert "l3.free, l3.resync" in gap.detail
    assert ending_gaps([_rollout({"terminated": 9, "truncated": 1})], 200) == []
    assert ending_gaps([_rollout({"terminated": 9, "both": 1})], 200) == []
    # No time limit: the reference cannot truncate, nothing is missing.
    assert ending_gaps(short, None) == []


def _port_without_getter(tmp_path: Path) -> tuple[Path, Path]:
    """FrozenLake's NumPy port with `state_to_reference` renamed away, and its spec not
    listing it (the bridge is optional to load: the checks run without state reads)."""
    port = tmp_path / "port"
    shutil.copytree(FROZENLAKE / "ports" / "numpy", port)
    env = port / "env.py"
    env.write_text(env.read_text().replace("def state_to_reference(", "def _unused_getter("))
    example = tmp_path / "frozenlake"
    shutil.copytree(FROZENLAKE, example, ignore=shutil.ignore_patterns("ports"))
    spec = example / "envport.toml"
    listed = '"VectorEnv", "state_from_reference", "state_to_reference"'
    assert listed in spec.read_text()
    spec.write_text(spec.read_text().replace(listed, '"VectorEnv", "state_from_reference"'))
    return example, port


@pytest.mark.slow
def test_a_port_without_state_reads_verifies_with_gaps_and_fails_strict(tmp_path: Path) -> None:
    example, port = _port_without_getter(tmp_path)
    out = tmp_path / "report.json"
    junit = tmp_path / "junit.xml"
    args = ["verify", str(example), "--port", str(port), "--levels", "l2"]
    done = run_envport(*args, "--json", str(out), "--junit", str(junit))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "verified with gaps: backend numpy" in done.stdout
    assert "gap  l2.interaction: no state reads;" in done.stdout
    assert "gap  l2.reset: observations only;" in done.stdout
    report = json.loads(out.read_text())
    kinds = {(g["check"], g["kind"]) for g in report["gaps"]}
    assert ("l2.interaction", "no state reads") in kinds and report["passed"]
    assert ET.parse(junit).getroot().find("testcase[@classname='envport.gaps']") is not None
    strict = run_envport(*args, "--strict", "--json", str(out))
    assert strict.returncode == 1, strict.stdout + strict.stderr
    assert "NOT VERIFIED (--strict: gaps)" in strict.stdout
    assert "FAIL l2.interaction: no state reads;" in strict.stdout
    assert not json.loads(out.read_text())["passed"]


@pytest.mark.slow
def test_the_known_good_port_verifies_without_gaps(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    done = run_envport(
        "verify", str(FROZENLAKE), "--port", str(FROZENLAKE / "ports" / "numpy"),
        "--levels", "l2,l3", "--strict", "--json", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "verified: backend numpy" in done.stdout
    assert json.loads(out.read_text())["gaps"] == []


@pytest.mark.slow
def test_reverse_injection_plays_to_the_time_limit_and_catches_a_wrong_one(tmp_path: Path) -> None:
    # CartPole's episodes under the plan's policies end after a few dozen steps, and reverse
    # injection has no late starts: the reference's look-ahead finds actions that survive
    # to the 500-step limit from the port's own starts, and the port plays them.
    out = tmp_path / "report.json"
    args = ["--reverse-injection", "--episodes", "40", "--json", str(out)]
    done = run_envport("verify", str(CARTPOLE), "--port", str(CARTPOLE / "ports" / "numpy"), *args)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(out.read_text())
    limit = {lv["mode"]: lv for lv in report["levels"]}["free@limit"]
    assert limit["endings"].get("truncated", 0) >= 1
    assert not [g for g in report["gaps"] if g["kind"] == "ending never reached"]
    # A port truncating at 200 steps (CartPole-v0's limit) behind the v1 spec fails there.
    port = tmp_path / "v0"
    shutil.copytree(
        CARTPOLE / "ports" / "numpy", port, ignore=shutil.ignore_patterns("__pycache__")
    )
    physics = port / "physics.py"
    assert "MAX_STEPS = 500" in physics.read_text()
    physics.write_text(physics.read_text().replace("MAX_STEPS = 500", "MAX_STEPS = 200"))
    wrong = run_envport("verify", str(CARTPOLE), "--port", str(port), *args)
    assert wrong.returncode == 1, wrong.stdout + wrong.stderr
    failed = [lv for lv in json.loads(out.read_text())["levels"] if not lv["passed"]]
    assert failed and all(lv["mode"].endswith("@limit") for lv in failed)
    assert all(lv["divergences"][0]["step"] in (199, 200) for lv in failed)


def test_the_reference_search_survives_to_the_limit_where_random_play_does_not() -> None:
    from envport.spec import load_spec
    from envport.targets.reference import Reference
    from envport.verifiers.draws.survival import surviving_actions

    spec = load_spec(ROOT / "examples" / "mountaincar")
    reference = Reference(spec)
    reference.reset(0)
    start = reference.read_state()
    plan = surviving_actions(reference, start, 200, 0)
    assert plan is not None and len(plan) == 200
    # Replayed from the same start, the reference truncates on the plan's last step.
    reference.write_state(start)
    outs = [reference.step(int(action)) for action in plan]
    assert outs[-1].truncated and not any(o.terminated or o.truncated for o in outs[:-1])


def _session_without_getter(directory: Path) -> Path:
    """CartPole's JAX replay session with `state_to_reference` renamed away."""
    shutil.copytree(CARTPOLE / "replay" / "jax", directory)
    for answer in directory.glob("*.md"):
        text = answer.read_text()
        answer.write_text(text.replace("def state_to_reference(", "def _unused_getter("))
    return directory


@pytest.mark.slow
def test_a_translate_run_with_gaps_says_so_everywhere_and_strict_fails_it(tmp_path: Path) -> None:
    from run_fixtures import clean_env, envport, fast_spec

    spec = fast_spec(tmp_path / "spec")
    toml = spec / "envport.toml"
    listed = '"step", "state_from_reference", "state_to_reference"'
    assert listed in toml.read_text()
    toml.write_text(toml.read_text().replace(listed, '"step", "state_from_reference"'))
    session = _session_without_getter(tmp_path / "session")
    common = ["translate", str(spec), "--target", "jax", "--model", f"replay:{session}"]
    done = envport(*common, "--out", str(tmp_path / "runs"), env=clean_env())
    assert done.returncode == 0, done.stdout + done.stderr
    assert "verified with gaps (cartpole" in done.stdout
    assert "gap l2.interaction: no state reads;" in done.stdout
    (run,) = (tmp_path / "runs").iterdir()
    state = json.loads((run / "run.json").read_text())
    assert state["status"] == "verified" and "with" in state["reason"]
    # Without the getter no check reads the state a step leaves: each says so.
    checks = {"l1.transition", "l2.interaction", "l2.reset", "l3.resync"}
    assert checks == {g["check"] for g in state["gaps"]}
    html = (run / "reports" / "report.html").read_text()
    assert "verified with gaps" in html and "What the passing checks did not show" in html
    strict = envport(*common, "--strict", "--out", str(tmp_path / "strict"), env=clean_env())
    # The gaps fail the whole-port check, and the repair asked of the model (the replay
    # session has no answer for it: the run stops there, resumable) names them.
    assert strict.returncode != 0 and "gaps FAIL" in strict.stdout, strict.stdout
    (run,) = (tmp_path / "strict").iterdir()
    state = json.loads((run / "run.json").read_text())
    assert state["status"] != "verified" and state["results"]["gaps"]["passed"] is False
    assert "close this gap" in state["results"]["gaps"]["failures"][0]


def test_junit_carries_the_references_branch_coverage_as_properties() -> None:
    from envport.verifiers.reporting.branch_report import Branch, BranchCoverage

    report = _report(strict=False)
    missed = Branch(file="game.py", line=88, source="if board.empty():", never="never true")
    report.coverage = BranchCoverage(
        total=10, covered=9, levels={"l1": 7, "l3": 9}, missed=[missed]
    )
    report.gaps = report.gaps + report.coverage.gaps()
    suite = ET.fromstring(junit_xml(report))
    found = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert found == {
        "reference_branches.total": "10",
        "reference_branches.covered": "9",
        "reference_branches.l1": "7",
        "reference_branches.l3": "9",
    }
    names = [case.get("name") for case in suite.iter("testcase")]
    assert any("game.py:88 `if board.empty():` never true" in (n or "") for n in names)
    # The translate run's state: the branch is a gap of its own "coverage" outcome.
    outcomes = _outcomes("composed", report, "load", Path("."))
    (coverage,) = [o for o in outcomes if o.name == "coverage"]
    assert coverage.passed and [g.detail for g in coverage.gaps] == [missed.text()]
