"""`envport translate` against a hostile model API, end to end: real subprocesses, the real
openai SDK against the fake API server. A hung call cannot outlast --max-minutes, odd bodies
end a run with one line and exit 2 (resumable, no answered call paid twice), and escape
sequences from the server never reach the terminal, run.json or the transcript raw.

Model answers scripted below are hand-written for these tests (SCRIPTED_*).
"""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from envport.batch.config import load_batch
from envport.cli import main
from envport.runs.options import Limits

from fake_api import Answer, FakeAPI, Mangled, Silent, Status
from helpers import ROOT
from run_fixtures import clean_env, envport, fast_spec

# Prose without a file block: unusable, so the driver re-asks within the same step.
SCRIPTED_PROSE = "I will port the physics with an Euler step; the code follows in my next answer."
HOSTILE = "\x1b]0;owned\x07\x1b[31mred\x1b[2J\x9b1m"
RAW_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
PRICES = '[models."fake-model"]\ninput = 1.0\noutput = 2.0\n'


@pytest.fixture
def api() -> Any:
    with FakeAPI() as server:
        yield server


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    return fast_spec(tmp_path / "cartpole")


def translate(spec: Path, out: Path, api: FakeAPI, *extra: str) -> list[str]:
    return [
        "translate",
        str(spec),
        "--target",
        "numpy",
        "--model",
        "openai:fake-model",
        "--base-url",
        api.openai_base_url,
        "--out",
        str(out),
        *extra,
    ]


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "envport", *args]


def only_run(out: Path) -> Path:
    runs = [p for p in out.iterdir() if p.is_dir()]
    assert len(runs) == 1, runs
    return runs[0]


def events(run: Path) -> list[dict[str, Any]]:
    records = []
    for line in (run / "transcript.jsonl").read_text().splitlines():
        with contextlib.suppress(ValueError):
            records.append(json.loads(line))
    return records


def calls(run: Path) -> list[dict[str, Any]]:
    return [e for e in events(run) if e["event"] == "model_call"]


def run_state(run: Path) -> dict[str, Any]:
    return json.loads((run / "run.json").read_text())


def message_count(request: Any) -> int:
    return len(request.body["messages"])


def assert_resumed_from_the_cache(run: Path, api: FakeAPI, before: int) -> None:
    """Resumed with one more unusable answer: the answered generate call comes from the
    cache, the unanswered re-ask is asked again, and the next call (a repair) finds the
    script empty (HTTP 400, exit 2)."""
    api.script([SCRIPTED_PROSE])
    again = envport("resume", str(run), "--max-minutes", "5", env=clean_env())
    assert again.returncode == 2, again.stdout + again.stderr
    assert "fake_api: script exhausted" in again.stderr
    live = api.requests[before:]
    assert len(live) == 2
    # system, the task, the unusable answer, the re-ask: not the generate call again.
    assert message_count(live[0]) == 4
    assert "Repair iteration 1" in live[1].body["messages"][-1]["content"]
    resumed = calls(run)[-2:]
    assert [(c["purpose"]["phase"], c["cached"]) for c in resumed] == [
        ("generate", True),
        ("generate-reask", False),
    ]


@pytest.mark.slow
def test_max_minutes_cancels_a_hung_call_and_a_resume_asks_only_it_again(
    tmp_path: Path, api: FakeAPI, spec: Path
) -> None:
    api.script([SCRIPTED_PROSE, Silent()])
    out = tmp_path / "runs"
    args = translate(spec, out, api, "--max-minutes", "0.1", "--call-timeout", "30")
    result = envport(*args, env=clean_env())
    assert result.returncode == 1, result.stdout + result.stderr
    assert (
        "gave up: wall-time budget of 0.1 minutes used up; the generate-reask physics #0 call "
        "in flight was cancelled" in result.stdout
    )
    assert re.search(r"resume: +envport resume \S+ --max-minutes M", result.stdout)
    run = only_run(out)
    state = run_state(run)
    assert state["status"] == "gave_up" and state["step"] == 0
    # Cut at the 6 s limit, not at the 30 s call deadline (no tighter: load delays the cut).
    assert 6.0 <= state["elapsed_s"] < 25.0, state["elapsed_s"]
    assert state["limits"]["call_timeout"] == 30.0 and state["paid_calls"] == 1
    errors = [e for e in events(run) if e["event"] == "model_error"]
    assert len(errors) == 1 and "in flight was cancelled" in errors[0]["message"]
    assert api.total_hits == 2

    assert_resumed_from_the_cache(run, api, before=2)


@pytest.mark.slow
def test_max_minutes_1_ends_a_run_within_70_s_during_a_hung_call(
    tmp_path: Path, api: FakeAPI, spec: Path
) -> None:
    api.script([Silent()])
    out = tmp_path / "runs"
    started = time.monotonic()
    process = subprocess.Popen(
        command(*translate(spec, out, api, "--max-minutes", "1")),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=clean_env(),
    )
    watchdog = threading.Timer(180, process.kill)  # a hang fails the test, not the suite
    watchdog.start()
    try:
        assert process.stdout is not None
        ended = None
        for line in process.stdout:  # progress lines, as they are printed
            if ended is None and "gave up: wall-time budget of 1 minutes used up" in line:
                ended = time.monotonic() - started
        process.wait()
    finally:
        watchdog.cancel()
    assert process.returncode == 1
    # From the command's start (imports included) to the run giving up; the 180 s call
    # deadline never came (no tighter bound: imports and the cut take longer under load).
    assert ended is not None and ended < 150, ended
    state = run_state(only_run(out))
    assert state["status"] == "gave_up" and state["paid_calls"] == 0
    assert 60 <= state["elapsed_s"] < 120, state["elapsed_s"]
    assert api.total_hits == 1


@pytest.mark.slow
def test_odd_bodies_end_the_run_with_one_line_and_resume_without_paying_twice(
    tmp_path: Path, api: FakeAPI, spec: Path
) -> None:
    prices = tmp_path / "prices.toml"
    prices.write_text(PRICES)
    content_a_number = Mangled(Answer("x", output_tokens=5), {"choices.0.message.content": 12})
    negative_usage = Mangled("cheap", {"usage.prompt_tokens": -99_000_000})
    api.script([SCRIPTED_PROSE, content_a_number, negative_usage])
    out = tmp_path / "runs"
    env = clean_env(ENVPORT_PRICES=str(prices))
    result = envport(*translate(spec, out, api, "--call-attempts", "2"), env=env)
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert (
        "openai:fake-model: gave up after 2 attempts; last error: malformed response body "
        "(usage.prompt_tokens is -99000000, out of range); the run is saved, continue with: "
        "envport resume " in lines[0]
    )
    assert "Traceback" not in result.stdout + result.stderr
    run = only_run(out)
    state = run_state(run)
    assert state["status"] == "stopped" and state["paid_calls"] == 3

    # Both refused answers are in the ledger: one at its sound usage, one at the worst case
    # (estimated input and all 8192 answer tokens), never at the reported -$99.
    answered, odd_content, odd_usage = calls(run)
    assert [c["stop_reason"] for c in (answered, odd_content, odd_usage)] == [
        "end",
        "malformed",
        "malformed",
    ]
    assert odd_content["usage"]["output_tokens"] == 5
    assert odd_usage["usage"]["output_tokens"] == 8192
    worst = (odd_usage["usage"]["input_tokens"] * 1.0 + 8192 * 2.0) / 1e6
    assert odd_usage["cost_usd"] == pytest.approx(worst)
    total = sum(c["cost_usd"] for c in (answered, odd_content, odd_usage))
    assert state["cost_usd"] == pytest.approx(total, abs=1e-6) and total > worst

    assert_resumed_from_the_cache(run, api, before=3)


def test_escape_sequences_from_the_server_never_reach_output_or_files_raw(
    tmp_path: Path, api: FakeAPI, spec: Path
) -> None:
    api.script([Answer(f"{SCRIPTED_PROSE} {HOSTILE}"), Status(400, f"bad request {HOSTILE}")])
    out = tmp_path / "runs"
    result = envport(*translate(spec, out, api), env=clean_env())
    assert result.returncode == 2, result.stdout + result.stderr
    shown = result.stdout + result.stderr
    assert not RAW_CONTROLS.search(shown), repr(shown)
    assert "bad request \\x1b]0;owned\\x07\\x1b[31mred" in result.stderr

    # The answer went back to the model in the re-ask escaped: a prompt holds no raw controls.
    reask = api.requests[1].body["messages"]
    assert reask[2]["role"] == "assistant" and not RAW_CONTROLS.search(reask[2]["content"])
    assert reask[2]["content"].endswith("\\x1b[2J\\x9b1m")

    run = only_run(out)
    for name in ("run.json", "transcript.jsonl"):
        raw = (run / name).read_bytes()
        assert b"\x1b" not in raw and b"\x07" not in raw and "\x9b".encode() not in raw, name
    # JSON would write ESC as \u001b: decoded, the strings hold the visible escapes instead.
    for record in events(run):
        assert not RAW_CONTROLS.search(json.dumps(record, ensure_ascii=False)), record["event"]
    answer = next(e for e in events(run) if e["event"] == "answer")
    assert "\\x1b]0;owned\\x07" in answer["text"]
    state = run_state(run)
    assert state["status"] == "stopped" and "\\x1b[31mred" in state["reason"]


def test_call_settings_in_a_batch_reach_translate(tmp_path: Path) -> None:
    fast_spec(tmp_path / "spec")
    path = tmp_path / "BATCH.toml"
    path.write_text(
        '[defaults]\ncall_timeout = 90.5\ncall_attempts = 3\n[[runs]]\nspec = "spec"\n'
        'target = "numpy"\nmodel = "openai:m"\n'
    )
    (run,) = load_batch(path).runs
    limits = run.translate(None).limits
    assert (limits.call_timeout, limits.call_attempts) == (90.5, 3)
    assert limits.model_fields_set == {"call_timeout", "call_attempts", "max_iterations"}


@pytest.mark.parametrize("flag", ["--call-timeout", "--call-attempts"])
def test_call_settings_are_checked(
    spec: Path, flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["translate", str(spec), "--target", "numpy", "--model", "openai:m", flag, "0"])
    assert caught.value.code == 2
    assert f"{flag}: expected" in capsys.readouterr().err


def test_a_call_setting_is_not_a_budget() -> None:
    # Only a raised budget continues a run that gave up; how calls are tried is not one.
    assert not Limits(call_timeout=5.0, call_attempts=2).gives_budget()
    assert Limits(max_minutes=5.0).gives_budget()
