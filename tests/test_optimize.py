"""`envport translate --optimize` end to end: real subprocesses, real git, real verifier and
bench workers. No mocks.

Model answers are HAND-WRITTEN for these tests (the SCRIPTED_* constants), served either as a
replay session written into the test's directory (labelled "hand-written") or through the
real openai SDK against tests/fake_api.py; the physics module comes from the hand-written,
labelled NumPy replay session in examples/cartpole/replay/numpy. The run starts from a
deliberately slow but correct port (its `step` loops over the batch in Python), so the one
real optimisation is unmistakably faster (vectorised: about 100x at B=256) and the scripted
"optimisation" that does the per-env work three times is unmistakably slower (about a third
of the speed): the 5% rule decides both with a wide margin even on a loaded 2-core machine.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import git
import pytest

from envport.pipeline.prompting import PromptBuilder, target_info
from envport.pipeline.sources.reading import read_sources
from envport.prompts.render import Prompts
from envport.runs.state import OptimizeAttempt, OptimizeProgress, OptimizeSettings, RunState
from envport.spec import load_spec

from fake_api import FakeAPI, Status
from helpers import CARTPOLE, ROOT
from run_fixtures import clean_env, envport, fast_spec

SESSION = CARTPOLE / "replay" / "numpy"
PHYSICS = (SESSION / "000-generate-physics.md").read_text()
REPAIR = (SESSION / "001-repair.md").read_text()
# The session's repaired, vectorised entry module (hand-written), as a whole-file answer.
FAST_ENV_FILE = REPAIR[REPAIR.index("### File: env.py") : REPAIR.index("### File: tests/")]

VECTORISED_STEP = """\
        self.physics = dynamics(self.physics, np.asarray(actions))
        self.elapsed += 1
        terminated = is_terminated(self.physics)
"""
LOOPED_STEP = """\
        actions = np.asarray(actions)
        physics = np.empty_like(self.physics)
        terminated = np.zeros(self.num_envs, dtype=bool)
        for i in range(self.num_envs):
            physics[i] = dynamics(self.physics[i : i + 1], actions[i : i + 1])[0]
            terminated[i] = is_terminated(physics[i : i + 1])[0]
        self.physics = physics
        self.elapsed += 1
"""
# The same loop doing each env's work three times, keeping the last result.
TRIPLED_STEP = LOOPED_STEP.replace(
    "            physics[i] = dynamics(",
    "            for _ in range(3):\n                physics[i] = dynamics(",
).replace(
    "            terminated[i] = is_terminated(",
    "                terminated[i] = is_terminated(",
)
assert VECTORISED_STEP in FAST_ENV_FILE and TRIPLED_STEP != LOOPED_STEP

# Scripted answers, hand-written for these tests.
SCRIPTED_SLOW_ENV = (
    "The entry module, one env at a time through the batched physics.\n\n"
    + FAST_ENV_FILE.replace(VECTORISED_STEP, LOOPED_STEP)
)
SCRIPTED_SLOWER = (
    "Computing each env's step three times and keeping the last makes the loop robust to "
    "transient errors.\n\n" + FAST_ENV_FILE.replace(VECTORISED_STEP, TRIPLED_STEP)
)
SCRIPTED_FAST = (
    "Where the time goes: a Python loop over the batch in `step`, a dozen small NumPy calls "
    "per env. Step all envs at once with the batched physics.\n\n" + FAST_ENV_FILE
)

# Small benches keep the test fast; the effects are far larger than the noise.
BENCH = ("--bench-batch-sizes", "256,8", "--bench-steps", "10", "--bench-repeats", "3")


def live_args(spec: Path, out: Path, api: FakeAPI, *extra: str) -> list[str]:
    return [
        "translate", str(spec), "--target", "numpy", "--model", "openai:fake-model",
        "--base-url", api.openai_base_url, "--out", str(out), *extra,
    ]  # fmt: skip


def only_run(out: Path) -> Path:
    runs = [p for p in out.iterdir() if p.is_dir()]
    assert len(runs) == 1, runs
    return runs[0]


def events(run: Path) -> list[dict[str, Any]]:
    records = []
    for line in (run / "transcript.jsonl").read_text().splitlines():
        try:
            records.append(json.loads(line))
        except ValueError:  # a line torn by a kill
            continue
    return records


def of(run: Path, kind: str) -> list[dict[str, Any]]:
    return [e for e in events(run) if e["event"] == kind]


def user_text(body: dict[str, Any]) -> str:
    return [m for m in body["messages"] if m["role"] == "user"][-1]["content"]


def git_log(run: Path) -> list[str]:
    return [c.message.strip() for c in git.Repo(run).iter_commits()]


def sps_line(attempt: dict[str, Any]) -> str:
    before, after = attempt["sps_before"], attempt["sps_after"]
    figures = ", ".join(
        f"B={b}: {before[b]:,.0f} -> {after[b]:,.0f}" for b in sorted(after, key=int)
    )
    return f"round {attempt['round']} {'kept' if attempt['kept'] else 'reverted'}: {figures}"


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    return fast_spec(tmp_path / "cartpole")


SLOW_PORT = [("generate", "physics", 0, PHYSICS), ("generate", "env", 0, SCRIPTED_SLOW_ENV)]
# An optimisation that breaks a level is reverted like a slower one; that rule is unit-tested
# in test_decide.py, so the end-to-end run here takes one revert and one keep.
OPTIMISATIONS = [
    ("optimize", None, 1, SCRIPTED_SLOWER),
    ("optimize", None, 2, SCRIPTED_FAST),
]


def optimize_session(directory: Path, answers: list[tuple[str, str | None, int, str]]) -> Path:
    """A replay session of hand-written answers (the slow port, then optimisations)."""
    directory.mkdir(parents=True)
    entries = []
    for phase, module, iteration, text in answers:
        name = f"{iteration:03d}-{phase}{'-' + module if module else ''}.md"
        (directory / name).write_text(text, encoding="utf-8")
        entries.append(
            {
                "phase": phase,
                "module": module,
                "iteration": iteration,
                "answer_file": name,
                "source": "hand-written",
                "model": "hand-written",
            }
        )
    session = {"format": "envport-replay/1", "entries": entries}
    (directory / "session.json").write_text(json.dumps(session, indent=2))
    return directory


@pytest.mark.slow
def test_a_slower_optimisation_is_reverted_and_a_faster_one_kept(
    tmp_path: Path, spec: Path
) -> None:
    started = time.monotonic()
    out = tmp_path / "runs"
    session = optimize_session(tmp_path / "session", SLOW_PORT + OPTIMISATIONS)
    result = envport(
        "translate", str(spec), "--target", "numpy", "--model", f"replay:{session}",
        "--out", str(out), "--optimize", "--optimize-rounds", "2", *BENCH,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    run = only_run(out)
    prompts = [p["messages"][-1]["text"] for p in of(run, "prompt")]
    assert len(prompts) == 4

    # The first optimise prompt: the bench numbers, the rule, the backend's checklist.
    first = prompts[2]
    assert "Optimisation round 1 of 2" in first
    assert "| 256 |" in first and "(this one decides)" in first and "| 8 |" in first
    assert "at least 1.05x the current port's (a gain of 5% or more)" in first
    assert "Vectorise over the batch" in first and "Preallocate" in first
    assert "for i in range(self.num_envs)" in first  # the current files
    # The model is told why each attempt was reverted, in the next optimise prompt.
    assert "Optimisation round 2 of 2" in prompts[3]
    assert "was reverted: every level still passed, but SPS at B=256" in prompts[3]
    assert "below the 1.05x needed" in prompts[3]
    assert "round 1: reverted: SPS at B=256" in prompts[3]  # the earlier rounds

    start = of(run, "optimize_bench")
    assert len(start) == 1 and set(start[0]["sps"]) == {"8", "256"}
    attempts = of(run, "optimize_attempt")
    assert [(a["round"], a["kept"]) for a in attempts] == [(1, False), (2, True)]
    slower, faster = attempts
    assert slower["ratio"] < 1.05 and slower["sps_after"]["256"] < slower["sps_before"]["256"]
    assert len(slower["runs_before"]["256"]) == 3 and len(slower["runs_after"]["256"]) == 3
    assert faster["ratio"] >= 1.05
    # The kept port is judged against the port as it stood, measured again in its session.
    assert faster["sps_after"]["256"] > faster["sps_before"]["256"] * 1.05
    decisions = [d["decision"] for d in of(run, "decision")]
    assert decisions[-2:] == ["revert", "keep"]

    # Every attempt is in the history, the reverted ones with their reverts.
    log = git_log(run)
    assert log[0].startswith("optimize round 2:") and log[0].endswith("-> kept")
    assert "SPS at B=256" in log[0]
    assert log[1].startswith("revert optimize round 1: SPS at B=256")
    assert log[2].startswith("optimize round 1:") and log[2].endswith("-> reverted")
    env_py = (run / "port" / "env.py").read_text()
    assert "for i in range" not in env_py and "reward = np.ones(self.num_envs)" in env_py

    state = RunState.model_validate_json((run / "run.json").read_text())
    assert state.status == "verified" and state.phase == "done"
    assert state.reason.startswith("every level passes; 1 of 2 optimisation rounds kept")
    assert state.optimization.sps[256] == faster["sps_after"]["256"]
    assert all(outcome.passed for outcome in state.results.values())
    # The report shows each attempt and its SPS; the bench file is envport bench's format.
    outcome = (run / "reports" / "outcome.md").read_text()
    assert "## Optimisation" in outcome and "The kept rounds made the port" in outcome
    assert "| 1 | reverted |" in outcome and "| 2 | kept |" in outcome
    bench = json.loads((run / "reports" / "bench-optimize.json").read_text())
    names = {row["name"] for row in bench["rows"]}
    assert names == {
        "numpy port before optimisation",
        "round 1: current port",
        "round 1: edit (reverted)",
        "round 2: current port",
        "round 2: edit (kept)",
    }
    assert "1 of 2 optimisation rounds kept" in result.stdout

    seconds = time.monotonic() - started
    print(f"\n[{seconds:.0f} s] start: {start[0]['sps']}")
    for attempt in (slower, faster):
        print(f"  {sps_line(attempt)} (ratio {attempt['ratio']:.3f})")


def by_prompt(flavour: str, body: dict[str, Any]) -> Any:
    """The fake model for the kill test: the answer depends on the request alone."""
    text = user_text(body)
    if "write module `physics.py`" in text:
        return PHYSICS
    if "write module `env.py`" in text:
        return SCRIPTED_SLOW_ENV
    if "Optimisation round 1 of 2" in text:
        return SCRIPTED_SLOWER
    if "Optimisation round 2 of 2" in text:
        return SCRIPTED_FAST
    return Status(400, f"unexpected request: {text[:80]}")


@pytest.mark.slow
def test_a_run_killed_mid_optimisation_resumes_without_asking_again(
    tmp_path: Path, spec: Path
) -> None:
    out = tmp_path / "runs"
    with FakeAPI(responder=by_prompt) as api:
        args = live_args(spec, out, api, "--optimize", "--optimize-rounds", "2", *BENCH)
        process = subprocess.Popen(
            [*envport_command(), *args],
            cwd=ROOT,
            env=clean_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            # Its own process group, so the kill takes its workers too: a worker still
            # starting when its parent dies cannot tell it was orphaned, and would linger.
            start_new_session=True,
        )
        try:
            # Killed while round 1's edit is checked or benched: after the answer arrived.
            run = wait_for(out, process, lambda e: e["event"] == "edit" and e["step"] >= 4)
        finally:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
        assert not of(run, "optimize_attempt")
        resumed = envport("resume", str(run), env=clean_env())
        assert resumed.returncode == 0, resumed.stdout + resumed.stderr
        repeats = Counter(json.dumps(r.body, sort_keys=True) for r in api.requests)
        assert max(repeats.values()) == 1, "a request was sent twice"
        assert api.total_hits == 4
    attempts = of(run, "optimize_attempt")
    assert [(a["round"], a["kept"]) for a in attempts] == [(1, False), (2, True)]
    assert any(e["event"] == "resumed" for e in events(run))
    state = RunState.model_validate_json((run / "run.json").read_text())
    assert state.status == "verified" and len(state.optimization.attempts) == 2
    assert "for i in range" not in (run / "port" / "env.py").read_text()
    print("\n  " + "\n  ".join(sps_line(a) for a in attempts))


def envport_command() -> list[str]:
    return [sys.executable, "-m", "envport"]


def wait_for(out: Path, process: subprocess.Popen, match: Any, limit: float = 120) -> Path:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        runs = [p for p in out.iterdir() if p.is_dir()] if out.is_dir() else []
        journaled = runs and (runs[0] / "transcript.jsonl").is_file()
        if journaled and any(match(e) for e in events(runs[0])):
            return runs[0]
        assert process.poll() is None, "the run ended first"
        time.sleep(0.01)
    raise AssertionError("the event never came")


def test_optimise_flags_need_optimize_and_valid_sizes(tmp_path: Path) -> None:
    out = tmp_path / "runs"
    base = ("translate", "examples/cartpole", "--target", "numpy", "--out", str(out))
    stray = envport(*base, "--optimize-rounds", "2", "--bench-steps", "5")
    assert stray.returncode == 2
    assert stray.stderr.strip() == (
        "envport: --optimize-rounds, --bench-steps only apply with --optimize"
    )
    sizes = envport(*base, "--optimize", "--bench-batch-sizes", "8,0")
    assert sizes.returncode == 2 and "--bench-batch-sizes" in sizes.stderr
    for result in (stray, sizes):
        assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    assert not out.exists()


def test_a_run_from_before_the_optimisation_phase_still_loads() -> None:
    old = {
        "run_id": "cartpole-numpy-old",
        "spec_source": "examples/cartpole/envport.toml",
        "spec_name": "cartpole",
        "target": "numpy",
        "model": "replay:x",
        "phase": "done",
        "status": "verified",
    }
    state = RunState.model_validate_json(json.dumps(old))
    assert state.optimize.rounds == 0 and not state.optimization.attempts
    assert state.optimize.largest == 8192


@pytest.mark.parametrize(
    ("target", "items"),
    [
        ("jax", ["Fixed shapes", "jnp.where", "`vmap`", "`jit`", "`lax.scan` fusion", "float32"]),
        ("numpy", ["Vectorise over the batch", "Preallocate", "In-place operations"]),
        ("rust", ["Preallocated buffers", "Threads", "Lookup tables", "Inlining"]),
    ],
)
def test_the_optimise_prompt_carries_the_numbers_the_rule_and_the_checklist(
    target: str, items: list[str]
) -> None:
    spec = load_spec(CARTPOLE)
    builder = PromptBuilder(Prompts(), spec, read_sources(spec), target_info(target))
    state = RunState(
        run_id="r",
        spec_source="s",
        spec_name="cartpole",
        target="numpy",
        model="replay:x",
        phase="optimize",
        optimize=OptimizeSettings(rounds=3, batch_sizes=[32, 4096], min_gain=0.1),
        optimization=OptimizeProgress(
            rounds_done=1,
            sps={32: 1_234_567.0, 4096: 52_000_000.0},
            attempts=[
                OptimizeAttempt(
                    round=1, kept=False, why="SPS at B=4096: 52M -> 40M (0.77x)", batch=4096
                )
            ],
        ),
        notes=["Your optimisation in round 1 was reverted: slower"],
    )
    text = builder.optimize(state, {"env.py": "STEP = 1\n"})
    assert "## Optimisation round 2 of 3" in text
    assert "| 32 | 1,234,567 (1.23M) |" in text
    assert "| 4096 | 52,000,000 (52M) (this one decides) |" in text
    assert "at least 1.10x the current port's (a gain of 10% or more)" in text
    assert "- round 1: reverted: SPS at B=4096: 52M -> 40M (0.77x)" in text
    assert "- Your optimisation in round 1 was reverted: slower" in text
    assert "### File: env.py" in text and "STEP = 1" in text
    for item in items:
        assert item in text, item
