"""Proposed cases: a model's targeted test is data the harness runs, with the reference as
the oracle; a proposal that cannot be loaded or played is its own failed check, named with
the reason, never the run's crash."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from envport.io.scratch import remove_tree
from envport.pipeline.checks import CheckCache, check_composed
from envport.pipeline.phases import checking_cases
from envport.repair.edits import EditParseError, parse_answer
from envport.spec import load_spec

from helpers import CARTPOLE, run_envport
from run_fixtures import bare_run

EDGE = """
[[case]]
state = { physics = [0.0, 0.0, 0.0, 0.0], elapsed_steps = 497 }
actions = [1, 0, 1, 0]
"""


def cases_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "proposed"
    directory.mkdir()
    (directory / "time_limit.toml").write_text(EDGE)
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


# Proposals a careless or hostile model could leave in a run, each with the reason its check
# must name. They are kept for the rest of the run, so any one that crashed the check crashed
# every resume too.
HOSTILE_CASES = {
    "broken.toml": ("state = [\n", "broken.toml: TOMLDecodeError"),
    "not_a_list.toml": ("case = 5\n", "`case` must be an array of tables"),
    "entries.toml": ('case = ["x"]\n', "entries.toml#0: the case: Input should be a valid"),
    "latin.toml": (b"\xff\xfe[[case]]\n", "latin.toml: UnicodeDecodeError"),
    "deep.toml": ("[[case]]\nactions = " + "[" * 5000 + "]" * 5000, "deep.toml: RecursionError"),
    "huge.toml": ("# padding\n" * 30000, "huge.toml: larger than 256 KiB"),
    "hostile.toml": (
        "[[case]]\nstate = { physics = 'abc' }\nactions = [1]\n"
        "[[case]]\nstate = { physics = [1.0, 2.0] }\nactions = [1]\n"
        "[[case]]\nstate = { elapsed_steps = 99999999999999999999 }\nactions = [1]\n"
        "[[case]]\nstate = { physics = [nan, 0.0, 0.0, 0.0] }\nactions = [1]\n"
        "[[case]]\nactions = [7]\n"
        "[[case]]\nactions = ['left']\n"
        "[[case]]\nstate = { elapsed_steps = 1.5 }\nactions = [1]\n",
        "hostile.toml#0: state field physics is not numbers",
    ),
}
HOSTILE_REASONS = [
    "hostile.toml#1: state field physics has shape (2,); the reference's is (4,)",
    "hostile.toml#2: state field elapsed_steps is not numbers",
    "hostile.toml#3: state field physics is not finite",
    "hostile.toml#4: the reference cannot play it: AssertionError",
    "hostile.toml#5: an action is not numbers",
    "hostile.toml#6: state field elapsed_steps does not fit the reference's int64",
]


def hostile_cases(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "time_limit.toml").write_text(EDGE)
    for name, (content, _) in HOSTILE_CASES.items():
        if isinstance(content, bytes):
            (directory / name).write_bytes(content)
        else:
            (directory / name).write_text(content)
    return directory


def assert_named_failures(messages: list[str]) -> None:
    reasons = [reason for _, reason in HOSTILE_CASES.values()] + HOSTILE_REASONS
    for reason in reasons:
        assert any(reason in message for message in messages), (reason, messages)
    assert len(messages) == len(HOSTILE_CASES) - 1 + 7  # hostile.toml holds seven


def test_a_hostile_proposed_case_is_its_own_failed_check(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    done = run_envport(
        "verify", str(CARTPOLE), "--port", str(CARTPOLE / "ports" / "numpy"),
        "--levels", "l3", "--episodes", "3",
        "--cases", str(hostile_cases(tmp_path / "proposed")), "--json", str(report),
    )  # fmt: skip
    assert done.returncode == 1 and "Traceback" not in done.stdout + done.stderr, done.stderr
    levels = {level["mode"]: level for level in json.loads(report.read_text())["levels"]}
    # The good case still ran and passed beside them.
    assert levels["proposed"]["passed"] and levels["proposed"]["episodes"] == 1
    assert not levels["unusable"]["passed"]
    assert_named_failures([d["message"] for d in levels["unusable"]["divergences"]])
    assert "FAIL cases.unusable: proposed case broken.toml" in done.stdout


def test_a_run_holding_a_hostile_case_checks_it_again_on_resume(tmp_path: Path) -> None:
    # The composed check a resume repeats: its cache key read every case as UTF-8 text, and the
    # check raised on the cases above; now the step ends with the cases' failed check.
    run = bare_run(tmp_path / "runs")
    remove_tree(run / "port")
    shutil.copytree(CARTPOLE / "ports" / "numpy", run / "port")
    hostile_cases(run / "proposed_tests")
    checked = check_composed(run, run / "port", "numpy", CheckCache(run / "cache" / "checks"))
    outcomes = {outcome.name: outcome for outcome in checked.outcomes}
    assert outcomes["cases.proposed"].passed and outcomes["l3.free"].passed
    assert not outcomes["cases.unusable"].passed and not checked.passed
    unusable = next(level for level in checked.report.levels if level.mode == "unusable")
    assert_named_failures([d.message for d in unusable.divergences])


def test_an_answer_proposing_an_unusable_case_is_asked_again(tmp_path: Path) -> None:
    # Kept, it would fail every composed check after it, which no repair of the port could
    # pass; refused, the model is asked again with the reason (the re-ask path).
    spec = load_spec(CARTPOLE)
    parse = checking_cases(spec, lambda text: parse_answer(text, tmp_path))
    fence = "```"

    def proposing(case: str) -> str:
        port_file = f"### File: env.py\n{fence}\nx = 1\n{fence}\n"
        return f"{port_file}### File: tests/t.toml\n{fence}\n{case}{fence}\n"

    assert list(parse(proposing(EDGE)).tests) == ["tests/t.toml"]
    for case, reason in (
        ("[[case]]\nactions = [7]\n", "t.toml#0: the reference cannot play it: AssertionError"),
        ("[[case]]\nstate = { physics = [1.0] }\nactions = [1]\n", "has shape (1,)"),
        ("case = 5\n", "`case` must be an array of tables"),
    ):
        with pytest.raises(EditParseError, match=re.escape(reason)):
            parse(proposing(case))
