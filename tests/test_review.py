"""`envport review` on a real run (the drift session of run_fixtures: L3 finds the bug, one
repair fixes it), through the real command line; and the transcript-to-iterations reader on
a journal with a kill in it."""

from __future__ import annotations

import json
import os
import pty
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from envport.review.timeline import build_timeline, describe_optimize
from envport.runs.events import EVENT, Event, OptimizeAttemptEvent, OptimizeBenchEvent

from helpers import ROOT
from run_fixtures import bare_run, clean_env, envport, in_terminal, translate_drift_run


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return translate_drift_run(tmp_path_factory.mktemp("review"))


def lines(text: str) -> list[str]:
    return [" ".join(line.split()) for line in text.splitlines()]


@pytest.mark.slow
def test_the_list_of_iterations(run: Path) -> None:
    result = envport("review", str(run))
    assert result.returncode == 0, result.stderr
    out = lines(result.stdout)
    assert "\x1b[" not in result.stdout  # plain off a terminal
    assert f"run {run.name}: cartpole -> numpy, model replay:{run.parent.parent}/session" in out
    assert "verified (every level passes)" in out
    assert "# phase module iter levels decision tokens cost cached" in out
    # Each check's levels, the static review of the port's source first.
    assert "0 generate physics 0 review ok module ok l1 ok accept 0 $0.0000 0" in out
    assert "1 generate env 0 review ok module ok l1 ok accept 0 $0.0000 0" in out
    # The drift shows over many steps: L3 and, since it plays 60-step batches against
    # Gymnasium's SyncVectorEnv, L2's vector check may see it too.
    checked = [line for line in out if line.startswith("2 check whole port - ")]
    assert len(checked) == 1 and "l3 FAIL" in checked[0]
    assert checked[0].endswith("repair 0 $0.0000 0")
    assert "3 repair whole port 1 review ok module ok l1 ok l2 ok l3 ok accept 0 $0.0000 0" in out
    assert "total: 0 tokens, $0.0000" in out
    assert f"4 iterations; one in full: envport review {run} --iteration K" in out


@pytest.mark.slow
def test_one_iteration_in_full(run: Path) -> None:
    first = envport("review", str(run), "--iteration", "0")
    assert first.returncode == 0, first.stderr
    out = first.stdout
    assert "iteration 0: generate physics #0 - 1 model calls, 0 tokens, $0.0000" in out
    assert "prompt (generate physics)" in out and "## Now write module `physics.py`" in out
    assert "more lines; --full shows them" in out  # the stable prefix, shortened
    # The answer as the model wrote it, its terminal escapes shown, not obeyed.
    assert '<script>document.title="pwned"</script>' in out
    assert "\\x1b]0;retitled\\x07\\x1b[2J" in out and "\x1b" not in out
    assert "diff physics.py (created)" in out and "+GRAVITY = 9.801" in out
    assert "check physics: pass" in out and "pass l1.physics.dynamics" in out
    assert "decision: accept" in out and "commit " in out

    check = envport("review", str(run), "--iteration", "2").stdout
    assert "check composed: FAIL" in check and "FAIL l3.free" in check
    assert "L3 free, episode" in check and "obs.theta_dot: expected" in check
    assert "decision: repair" in check

    repair = envport("review", str(run), "--iteration", "3").stdout
    assert "prompt (repair)" in repair and "Repair iteration 1" in repair
    assert "-GRAVITY = 9.801" in repair and "+GRAVITY = 9.8" in repair
    assert "check physics: pass" in repair  # the regression guard's re-check

    full = envport("review", str(run), "--iteration", "0", "--full").stdout
    assert "more lines; --full shows them" not in full and len(full) > len(out)


@pytest.mark.slow
def test_paged_with_colours_on_a_terminal(run: Path, tmp_path: Path) -> None:
    paged = tmp_path / "paged.txt"
    env = clean_env(PAGER=f"tee {paged}", TERM="xterm-256color", COLUMNS="120")
    main, secondary = pty.openpty()
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "envport", "review", str(run), "--iteration", "3"],
            cwd=ROOT,
            env=env,
            stdin=secondary,
            stdout=secondary,
            stderr=secondary,
        )
        os.close(secondary)
        received = b""
        while True:
            try:
                chunk = os.read(main, 65536)
            except OSError:  # the terminal closed: the command has ended
                break
            if not chunk:
                break
            received += chunk
        assert process.wait(timeout=60) == 0, received[-2000:]
    finally:
        os.close(main)
    text = paged.read_text()
    assert "-GRAVITY = 9.801" in text and "\x1b[" in text  # through the pager, in colour


def test_the_list_is_paged_with_colours_shown_as_colours(tmp_path: Path) -> None:
    """less shows escape codes as text unless LESS has -R: the list of iterations is paged
    too, so it needs the same setting as --iteration."""
    run = bare_run(tmp_path / "runs")
    seen = tmp_path / "pager-env.txt"
    env = clean_env(PAGER=f"sh -c 'echo \"LESS=$LESS\" > {seen}; cat > /dev/null'")
    env.pop("LESS", None)
    env.update(TERM="xterm-256color", COLUMNS="120")
    code, received = in_terminal(["review", str(run)], env)
    assert code == 0, received[-2000:]
    assert seen.read_text().strip() == "LESS=-R"
    # A user's own setting is kept.
    code, received = in_terminal(["review", str(run)], {**env, "LESS": "-FX"})
    assert code == 0, received[-2000:]
    assert seen.read_text().strip() == "LESS=-FX"


def test_calls_answered_by_a_replay_session_are_not_called_paid(tmp_path: Path) -> None:
    run = bare_run(tmp_path / "runs", model="replay:/sessions/cartpole")
    state = json.loads((run / "run.json").read_text())
    # As the driver leaves it after three answers from the session and one from the cache.
    state.update(paid_calls=3, cached_calls=1, step=3)
    (run / "run.json").write_text(json.dumps(state))
    shown = envport("review", str(run))
    assert shown.returncode == 0, shown.stderr
    assert "3 steps, 3 model calls answered from the replay session (+1 from the cache)" in (
        " ".join(shown.stdout.split())
    )
    assert "paid" not in shown.stdout
    page = envport("report", str(run), "--out", str(tmp_path / "report.html"))
    assert page.returncode == 0, page.stderr
    html = (tmp_path / "report.html").read_text()
    assert "3 model calls answered from the replay session (+1 from the cache)" in html
    assert "paid" not in html

    live = bare_run(tmp_path / "live", model="openai:gpt-4o")
    state = json.loads((live / "run.json").read_text())
    state.update(paid_calls=2, cached_calls=0)
    (live / "run.json").write_text(json.dumps(state))
    assert "2 paid model calls (+0 from the cache)" in envport("review", str(live)).stdout


@pytest.mark.slow
def test_a_replay_of_an_old_iteration_runs_the_port_it_checked(run: Path) -> None:
    """Iteration 2 found the drift that iteration 3 repaired: its replay must run the port of
    iteration 2, not RUN/port (which now passes)."""
    shown = envport("review", str(run), "--iteration", "2")
    assert shown.returncode == 0, shown.stderr
    text = " ".join(shown.stdout.split())
    assert f"replay lines run the port as it was at iteration 2 (--port {run}@2" in text
    replay = next(
        line.strip().removeprefix("replay: ")
        for line in shown.stdout.splitlines()
        if line.strip().startswith("replay: ") and "--levels l3" in line
    )
    words = shlex.split(replay)
    assert words[words.index("--port") + 1] == f"{run}@2"
    again = envport(*words[1:])
    assert again.returncode == 1, again.stdout + again.stderr  # the drift, shown again
    assert f"note: --port {run}@2: the port as it was at iteration 2" in again.stdout
    assert "obs.theta_dot" in again.stdout or "obs.x_dot" in again.stdout
    # RUN/port itself is the repaired port.
    now = envport(*[w if w != f"{run}@2" else str(run / "port") for w in words[1:]])
    assert now.returncode == 0, now.stdout + now.stderr
    missing = envport("verify", str(run), "--port", f"{run}@99", "--levels", "l3")
    assert missing.returncode == 2 and "no such iteration" in missing.stderr


def test_errors_are_one_line_exit_2(tmp_path: Path) -> None:
    missing = envport("review", str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and "no such run directory" in missing.stderr
    not_a_run = envport("review", str(tmp_path))
    assert not_a_run.returncode == 2 and "not an envport run" in not_a_run.stderr
    negative = envport("review", str(tmp_path), "--iteration", "-1")
    assert negative.returncode == 2 and "expected 0 or more" in negative.stderr
    for result in (missing, not_a_run, negative):
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr


@pytest.mark.slow
def test_an_unknown_iteration(run: Path) -> None:
    result = envport("review", str(run), "--iteration", "9")
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "envport: --iteration 9: no such iteration (this run has 0..3)"
    )


AT = "2026-01-01T00:00:00Z"


def events_of(records: list[dict[str, Any]]) -> list[Event]:
    """Hand-written journal lines, with the fields every line of their kind carries."""
    filled = {
        "prompt": {"system": "", "stable_prefix_sha256": "", "messages": [], "max_tokens": 100},
        "answer": {"stop_reason": "end", "cached": False, "model": "m"},
        "model_call": {"model": "m", "served_by": "m", "stop_reason": "end"},
        "edit": {"created": False},
        "check": {"levels": [], "seconds": 0.0, "cached": False},
        "run_started": {"run_id": "r", "spec": "s", "target": "numpy", "model": "m",
                        "phase": "modules", "scope": "physics", "iteration": 0},
        "optimize_bench": {"batch_sizes": [8192], "steps": 100, "repeats": 3, "runs": {},
                           "loops": {}, "seconds": 1.0, "cached": False},
        "optimize_attempt": {"sps_before": {}, "sps_after": {}, "runs_before": {},
                             "runs_after": {}, "bench_error": None, "bench_seconds": 1.0,
                             "cached": False},
    }  # fmt: skip
    filled["resumed"] = filled["run_started"]
    return [EVENT.validate_python({"at": AT, **filled.get(r["event"], {}), **r}) for r in records]


def outcome(name: str, level: str, passed: bool, scope: str = "env") -> dict[str, Any]:
    return {"name": name, "scope": scope, "level": level, "passed": passed}


def test_a_step_cut_short_by_a_kill_counts_once_and_keeps_its_bill() -> None:
    """A journal as the driver writes it when killed during step 1's check, then resumed."""
    purpose = {"phase": "generate", "module": "env", "iteration": 0}
    paid = {"event": "model_call", "purpose": purpose, "cached": False, "cost_usd": 0.25,
            "usage": {"input_tokens": 100, "output_tokens": 20}}  # fmt: skip
    events = [
        {"event": "run_started", "step": 0},
        {"event": "prompt", "step": 0, "purpose": {**purpose, "module": "physics"}},
        {**paid, "cost_usd": 0.5},
        {"event": "answer", "step": 0, "purpose": {**purpose, "module": "physics"}, "text": "a"},
        {"event": "check", "step": 0, "scope": "physics", "passed": True,
         "outcomes": [outcome("module:physics", "module", True, "physics")]},
        {"event": "decision", "step": 0, "decision": "accept"},
        {"event": "prompt", "step": 1, "purpose": purpose},
        paid,
        {"event": "answer", "step": 1, "purpose": purpose, "text": "first attempt"},
        {"event": "edit", "step": 1, "path": "env.py", "diff": "+x"},
        # killed here; resumed at step 1: the same prompt, answered from the cache
        {"event": "resumed", "step": 1},
        {"event": "prompt", "step": 1, "purpose": purpose},
        {**paid, "cached": True, "cost_usd": 0.0},
        {"event": "answer", "step": 1, "purpose": purpose, "text": "first attempt"},
        {"event": "edit", "step": 1, "path": "env.py", "diff": "+x"},
        {"event": "check", "step": 1, "scope": "env", "passed": False,
         "outcomes": [outcome("l1.transition:env", "l1", False)]},
        {"event": "decision", "step": 1, "decision": "repair"},
        # the driver journals "stuck" after the step counter moved on: same iteration
        {"event": "decision", "step": 2, "decision": "stuck"},
        {"event": "finished", "step": 2, "status": "gave_up"},
    ]  # fmt: skip
    timeline = build_timeline(events_of(events))
    assert [it.step for it in timeline.iterations] == [0, 1]
    second = timeline.iterations[1]
    assert second.label == "generate env #0" and len(second.edits) == 1
    assert second.cost_usd == 0.25 and second.cached_calls == 1
    assert second.levels() == {"l1": False} and second.decision == "stuck"
    assert timeline.cost_usd == 0.75 and timeline.usage.total == 240
    assert [e.event for e in timeline.run_events] == ["run_started", "resumed", "finished"]


def test_optimisation_steps_are_iterations_of_their_own() -> None:
    """`translate --optimize`: a bench step, then a round whose edit was measured."""
    purpose = {"phase": "optimize", "module": None, "iteration": 1}
    events = [
        {"event": "check", "step": 3, "scope": "composed", "passed": True, "outcomes": []},
        {"event": "optimize_bench", "step": 4, "sps": {"8192": 1.5e6}, "error": None},
        {"event": "prompt", "step": 5, "purpose": purpose},
        {"event": "edit", "step": 5, "path": "env.py", "diff": "+fast"},
        {"event": "optimize_attempt", "step": 5, "round": 1, "kept": False, "ratio": 1.01,
         "batch": 8192, "min_ratio": 1.05, "why": "below the 5% rule"},
        {"event": "decision", "step": 5, "decision": "revert"},
    ]  # fmt: skip
    timeline = build_timeline(events_of(events))
    bench, attempt = timeline.iterations[1:]
    assert bench.kind == "bench" and attempt.label == "optimize whole port #1"
    assert describe_optimize(bench.of(OptimizeBenchEvent)[0]) == (
        "benched the verified port, steps per second B=8192: 1,500,000"
    )
    assert describe_optimize(attempt.of(OptimizeAttemptEvent)[0]) == (
        "optimisation round 1: reverted (1.01x at B=8192, 1.05x needed): below the 5% rule"
    )
