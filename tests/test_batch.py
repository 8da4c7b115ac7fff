"""`envport batch` end to end: real subprocesses, the real openai SDK against the fake API
server (which counts every request), real replay sessions, real SIGKILL. No mocks.

Model answers are the hand-written ones of tests/run_fixtures.py (labelled there): a
physics module that drifts, the entry module, and the repair; three calls per run.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from envport.batch.child import order_json, read_order
from envport.batch.config import load_batch
from envport.batch.money import decide
from envport.cli import main
from envport.pipeline.command import command_words
from envport.runs.journal import read_events
from envport.runs.layout import create_run
from envport.runs.state import RunState
from envport.spec import load_spec

from fake_api import Answer, FakeAPI, Status
from helpers import ROOT, assert_lock_freed
from run_fixtures import (
    CORRECT_ENV,
    DRIFTING_PHYSICS,
    PHYSICS_FIX,
    clean_env,
    drift_session,
    envport,
    fast_spec,
)

SECRET = "sk-test-batch-secret-0123456789abcdef"
MODELS = ("fake-a", "fake-b", "fake-c")
CALLS_PER_RUN = 3


def last_user_text(body: dict[str, Any]) -> str:
    return [m for m in body["messages"] if m["role"] == "user"][-1]["content"]


def model(flavour: str, body: dict[str, Any]) -> Any:
    """The fake model: the answer depends on the request alone, as the kill test needs.

    Token counts are fixed so that dollars are exact under the test price file.
    """
    text = last_user_text(body)
    for marker, answer in (
        ("write module `physics.py`", DRIFTING_PHYSICS),
        ("write module `env.py`", CORRECT_ENV),
        ("Repair iteration 1", PHYSICS_FIX),
    ):
        if marker in text:
            return Answer(answer, input_tokens=20_000, output_tokens=5_000)
    return Status(400, f"unexpected request: {text[:80]}")


def batch_file(directory: Path, body: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "BATCH.toml"
    path.write_text(body)
    return path


def live_batch(tmp: Path, api: FakeAPI, head: str) -> Path:
    spec = fast_spec(tmp / "spec")
    runs = "".join(f'\n[[runs]]\nmodel = "openai:{name}"\n' for name in MODELS)
    return batch_file(
        tmp,
        f'{head}\n[defaults]\nspec = "{spec}"\ntarget = "numpy"\n'
        f'base_url = "{api.openai_base_url}"\n{runs}',
    )


def batch_command(path: Path) -> list[str]:
    return [sys.executable, "-m", "envport", "batch", str(path)]


def run_dirs(out: Path) -> dict[str, Path]:
    """Run id -> its run directory, named by the id alone (one run, one name)."""
    return {p.name: p for p in sorted(out.iterdir()) if (p / "run.json").is_file()}


def status(run: Path) -> str:
    try:
        return json.loads((run / "run.json").read_text())["status"]
    except (OSError, ValueError, KeyError):
        return "?"


def last_event(run: Path) -> str:
    events = list(read_events(run / "transcript.jsonl"))
    return events[-1].event if events else ""


def canonical(body: Any) -> str:
    return json.dumps(body, sort_keys=True)


@pytest.fixture
def api() -> Any:
    with FakeAPI(responder=model) as server:
        yield server


# --- the budget rule and the batch file: fast, in process --------------------------------


def test_total_cap_decisions() -> None:
    # No total: every run starts with its own cap.
    assert decide(None, 2.0, 0.0, 50.0, 3).action == "start"
    # Its cap fits beside what others spent and what running runs may still spend.
    start = decide(10.0, 4.0, 0.0, 6.0, 1)
    assert (start.action, start.budget_usd) == ("start", 4.0)
    # It does not fit now, but a running run may leave room: wait.
    assert decide(10.0, 4.0, 0.0, 8.0, 1).action == "wait"
    # Nothing running and no room: never, and the reason says why.
    never = decide(10.0, 4.0, 0.0, 7.0, 0)
    assert never.action == "never" and "total cost cap $10.0000 would be passed" in never.reason
    # A resumed run needs only what its own cap has left.
    assert decide(10.0, 4.0, 3.0, 5.5, 0).action == "start"
    # Without a cap of its own a run may spend what the total has left; the next one waits.
    alone = decide(10.0, None, 1.0, 3.0, 0)
    assert (alone.action, alone.budget_usd) == ("start", 7.0)
    assert decide(10.0, None, 0.0, 10.0, 1).action == "wait"


def test_batch_file_expands_and_checks(tmp_path: Path) -> None:
    spec = fast_spec(tmp_path / "spec")
    session = drift_session(tmp_path / "session")
    path = batch_file(
        tmp_path,
        "concurrency = 2\nrun_usd = 1.5\n[defaults]\nmax_iterations = 2\n"
        '[[runs]]\nspec = "spec"\ntargets = ["jax", "numpy"]\nmodels = ["replay:session", '
        '"anthropic:claude-sonnet-4-5"]\n'
        '[[runs]]\nspec = "spec"\nname = "again"\ntarget = "numpy"\nmodel = "openai:gpt-4o"\n'
        "run_usd = 0.5\noptimize = true\noptimize_rounds = 2\n",
    )
    plan = load_batch(path)
    assert plan.out == tmp_path / "runs" / "BATCH" and plan.concurrency == 2
    assert [run.id for run in plan.runs] == [
        "cartpole-jax-replay-session",
        "cartpole-jax-anthropic-claude-sonnet-4-5",
        "cartpole-numpy-replay-session",
        "cartpole-numpy-anthropic-claude-sonnet-4-5",
        "again-numpy-openai-gpt-4o",
    ]
    first, last = plan.runs[0], plan.runs[-1]
    assert first.options.model == f"replay:{session}"
    assert first.options.spec == str(spec / "envport.toml")
    assert first.options.limits.max_iterations == 2 and first.options.optimize.rounds == 0
    assert first.budget_usd == 1.5 and last.budget_usd == 0.5
    assert last.options.optimize.rounds == 2
    # What the run's process is handed: the options themselves, shown in its log as flags.
    handed = last.translate(0.5)
    assert read_order(order_json(handed)) == handed
    assert command_words(handed) == [
        "translate", str(spec / "envport.toml"), "--target", "numpy", "--model", "openai:gpt-4o",
        "--out", str(plan.out), "--run-id", "again-numpy-openai-gpt-4o",
        "--optimize", "--optimize-rounds", "2", "--max-iterations", "2", "--budget-usd", "0.5",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("concurrency = 0\n[[runs]]\n", "concurrency: Input should be greater than or equal to 1"),
        ('[[runs]]\nspec = "spec"\ntarget = "numpy"\nmodel = "x"\ncolour = 1\n', "colour"),
        ('[[runs]]\nspec = "nowhere"\ntarget = "numpy"\nmodel = "openai:m"\n', "runs[0]:"),
        ('[[runs]]\nspec = "spec"\ntarget = "cuda"\nmodel = "openai:m"\n', "target 'cuda'"),
        ('[[runs]]\nspec = "spec"\ntarget = "numpy"\nmodel = "gpt"\n', "is not <provider>"),
        ('[[runs]]\nspec = "spec"\ntarget = "numpy"\n', "no model"),
        (
            '[[runs]]\nspec = "spec"\ntarget = "numpy"\nmodel = "openai:m"\n' * 2,
            "both make run cartpole-numpy-openai-m; give one of them a `name`",
        ),
        (
            'total_usd = 1.0\nrun_usd = 2.0\n[[runs]]\nspec = "spec"\ntarget = "numpy"\n'
            'model = "openai:m"\n',
            "no run could start",
        ),
        ("runs = [", "not valid TOML"),
        (
            '[[runs]]\nspec = "spec"\ntarget = "numpy"\nmodel = "openai:m"\noptimize_rounds = 2\n',
            "optimize_rounds only applies with optimize = true",
        ),
        (
            '[[runs]]\nspec = "spec"\ntarget = "numpy"\nmodel = "openai:m"\noptimize = true\n'
            "bench_batch_sizes = [8, 0]\n",
            "runs[0]: batch_sizes: Value error, expected one or more batch sizes",
        ),
        # A run's token cap is budget_tokens: max_tokens, run.json's old name, would read
        # as the cap of each call in a batch file.
        (
            '[[runs]]\nspec = "spec"\ntarget = "numpy"\nmodel = "openai:m"\nmax_tokens = 9\n',
            "max_tokens",
        ),
    ],
)
def test_batch_file_errors_are_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], body: str, message: str
) -> None:
    fast_spec(tmp_path / "spec")
    assert main(["batch", str(batch_file(tmp_path, body))]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "runs").exists()


# --- whole batches ---------------------------------------------------------------------------


@pytest.mark.slow
def test_three_replay_runs_at_concurrency_two(tmp_path: Path) -> None:
    spec = fast_spec(tmp_path / "spec")
    session = drift_session(tmp_path / "session")
    runs = "".join(f'\n[[runs]]\nname = "{name}"\n' for name in ("one", "two", "three"))
    path = batch_file(
        tmp_path,
        f'concurrency = 2\n[defaults]\nspec = "{spec}"\ntarget = "numpy"\n'
        f'model = "replay:{session}"\n{runs}',
    )
    result = envport("batch", str(path))
    assert result.returncode == 0, result.stdout + result.stderr
    out = tmp_path / "runs" / "BATCH"
    found = run_dirs(out)
    assert sorted(found) == sorted(f"{n}-numpy-replay-session" for n in ("one", "two", "three"))
    assert all(status(run) == "verified" for run in found.values())
    # Plain lines off a terminal, and a summary row per run.
    assert "one-numpy-replay-session running" in result.stdout
    assert "3 of 3 verified" in result.stdout and "module ok l1 ok l2 ok l3 ok" in result.stdout
    # Never more than two at once, and two did run at once.
    spans = []
    for run in found.values():
        events = list(read_events(run / "transcript.jsonl"))
        spans.append((events[0].at, events[-1].at))
    overlaps = [sum(a <= t < b for a, b in spans) for t, _ in spans]
    assert max(overlaps) == 2, spans
    # Each run's HTML report was written at its end.
    assert all((run / "reports" / "report.html").is_file() for run in found.values())
    # One run, one name: the run directory is the run's id, its log beside it.
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["batch.json", *found, *(f"{name}.log" for name in found)]
    )
    assert all(
        json.loads((run / "run.json").read_text())["run_id"] == run.name for run in found.values()
    )


@pytest.mark.slow
def test_a_run_in_the_nested_layout_of_older_batches_is_resumed_where_it_is(
    tmp_path: Path,
) -> None:
    spec = fast_spec(tmp_path / "spec")
    session = drift_session(tmp_path / "session")
    path = batch_file(
        tmp_path,
        f'[[runs]]\nspec = "{spec}"\ntarget = "numpy"\nmodel = "replay:{session}"\n'
        "max_iterations = 0\n",
    )
    (planned,) = load_batch(path).runs
    slot = tmp_path / "runs" / "BATCH" / planned.id
    slot.mkdir(parents=True)
    (slot / "batch.log").write_text("an older batch's log\n")
    target = load_spec(spec).target("numpy")
    state = RunState(
        run_id="cartpole-numpy-20250101-000000-abcd",
        spec_source=str(spec / "envport.toml"),
        spec_name="cartpole",
        target="numpy",
        model=str(planned.options.model),
        modules=list(target.modules),
        phase="modules",
        entry=target.entry,
    )
    nested = create_run(slot, spec / "envport.toml", state).root
    result = envport("batch", str(path))
    # No repairs allowed and the drift needs one: it gives up, in the directory it had.
    assert result.returncode == 1, result.stdout + result.stderr
    assert status(nested) == "gave_up"
    assert any(e.event == "run_started" for e in read_events(nested / "transcript.jsonl"))
    assert not (slot / "run.json").exists() and sorted(p.name for p in slot.iterdir()) == [
        "batch.log",
        nested.name,
    ]
    log = (slot / "batch.log").read_text()
    assert log.startswith("an older batch's log") and f"envport resume {nested}" in log


def safe_to_kill(runs: dict[str, Path]) -> bool:
    """Mid-batch, and no model call in flight: a run in a check (its last event an edit) or
    finished. A kill inside a call would repeat that call by necessity: its answer was never
    received, so there is nothing to have cached."""
    states = {name: status(run) for name, run in runs.items()}
    verified = sum(s == "verified" for s in states.values())
    active = [runs[n] for n, s in states.items() if s != "verified"]
    if not (verified and active):
        return False
    return all(last_event(run) in ("edit", "proposed_test") for run in active)


@pytest.mark.slow
def test_killed_batch_resumes_without_repeating_a_model_request(
    tmp_path: Path, api: FakeAPI
) -> None:
    path = live_batch(tmp_path, api, "concurrency = 2")
    out = tmp_path / "runs" / "BATCH"
    env = clean_env(OPENAI_API_KEY=SECRET)
    process = subprocess.Popen(
        batch_command(path), cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT
    )
    try:
        deadline = time.monotonic() + 150
        while not (out.is_dir() and safe_to_kill(run_dirs(out))):
            assert process.poll() is None, "the batch ended before the kill point"
            assert time.monotonic() < deadline, "never reached a kill point"
            time.sleep(0.01)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        process.kill()
    before = run_dirs(out)
    unfinished = [name for name, run in before.items() if status(run) != "verified"]
    assert unfinished, "the kill came after the last run"
    # The runs died with the batch: none still holds its run lock.
    for name in unfinished:
        assert_lock_freed(before[name], 20)
    hits_at_kill = api.total_hits

    result = subprocess.run(
        batch_command(path), cwd=ROOT, env=env, capture_output=True, text=True, timeout=240
    )
    assert result.returncode == 0, result.stdout + result.stderr
    after = run_dirs(out)
    assert len(after) == 3 and all(status(run) == "verified" for run in after.values())
    assert "verified in an earlier batch run" in result.stdout
    assert all(
        any(e.event == "resumed" for e in read_events(after[name] / "transcript.jsonl"))
        for name in unfinished
        if name in after and name in before
    )
    # The proof: every request reached the server exactly once, across the kill.
    repeats = Counter(canonical(request.body) for request in api.requests)
    assert max(repeats.values()) == 1, "a model request was sent twice"
    assert api.total_hits == CALLS_PER_RUN * len(MODELS), (hits_at_kill, api.total_hits)
    # No key in any file the batch or its runs wrote.
    for file in out.rglob("*"):
        if file.is_file():
            assert SECRET.encode() not in file.read_bytes(), file


@pytest.mark.slow
def test_total_cost_cap_stops_new_runs(tmp_path: Path, api: FakeAPI) -> None:
    prices = tmp_path / "prices.toml"
    prices.write_text('[models."fake-"]\ninput = 1.0\noutput = 1.0\n')
    # One run costs 3 x (20k + 5k tokens) at $1/M = $0.075; after it, $0.075 + a run's cap
    # of $0.50 would pass $0.55.
    path = live_batch(tmp_path, api, "concurrency = 1\ntotal_usd = 0.55\nbudget_usd = 0.50")
    env = clean_env(OPENAI_API_KEY=SECRET, ENVPORT_PRICES=str(prices))
    result = subprocess.run(
        batch_command(path), cwd=ROOT, env=env, capture_output=True, text=True, timeout=240
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert api.total_hits == CALLS_PER_RUN
    out = result.stdout
    assert "1 of 3 verified" in out
    assert "2 run(s) not started: the total cost cap $0.5500 would be passed ($0.0750 spent" in out
    assert "spent $0.0750 of the total cap $0.55" in out
    found = run_dirs(tmp_path / "runs" / "BATCH")
    assert list(found) == ["cartpole-numpy-openai-fake-a"]
    state = json.loads((found["cartpole-numpy-openai-fake-a"] / "run.json").read_text())
    assert state["limits"]["budget_usd"] == 0.5 and state["cost_usd"] == pytest.approx(0.075)
    # Its report shows what each iteration cost, and the total.
    report = (found["cartpole-numpy-openai-fake-a"] / "reports" / "report.html").read_text()
    assert 'id="cost-plot"' in report and "$0.0750</th>" in report

    # The cap counts what earlier batch runs spent: running it again starts nothing new.
    again = subprocess.run(
        batch_command(path), cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert again.returncode == 1 and api.total_hits == CALLS_PER_RUN
    assert "2 run(s) not started" in again.stdout


@pytest.mark.slow
def test_failed_runs_are_retried_only_with_retry_failed(tmp_path: Path) -> None:
    spec = fast_spec(tmp_path / "spec")
    session = drift_session(tmp_path / "session")
    head = f'[[runs]]\nspec = "{spec}"\ntarget = "numpy"\nmodel = "replay:{session}"\n'
    # No repairs allowed: the drift L3 finds needs one, so the run gives up.
    path = batch_file(tmp_path, head + "max_iterations = 0\n")
    first = envport("batch", str(path))
    assert first.returncode == 1 and "gave up" in first.stdout, first.stdout + first.stderr
    (run,) = run_dirs(tmp_path / "runs" / "BATCH").values()
    assert status(run) == "gave_up"

    path.write_text(head + "max_iterations = 1\n")
    again = envport("batch", str(path))
    assert again.returncode == 1 and "--retry-failed retries it" in again.stdout
    assert status(run) == "gave_up"  # left alone

    retried = envport("batch", str(path), "--retry-failed")
    assert retried.returncode == 0, retried.stdout + retried.stderr
    assert status(run) == "verified" and "1 of 1 verified" in retried.stdout
    assert any(e.event == "resumed" for e in read_events(run / "transcript.jsonl"))
