"""Ctrl-C and SIGTERM at any moment: real processes, real signals sent to the process group
as a terminal sends them, the real replay session examples/cartpole/replay/numpy (labelled
there). No mocks.

A run stopped by the user exits 130 (SIGTERM: 143) and says how to continue; the port's
workers never die of the user's signal, so nothing the harness records blames the port for
it; `envport resume` (or the batch run again) then verifies without a repair the
uninterrupted run did not ask for.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from envport.runs.spec_copy import dumps
from envport.serve.client import PortWorker
from envport.serve.ops import Ping
from envport.spec import load_spec

from helpers import CARTPOLE, ROOT, user_env
from run_fixtures import clean_env

SESSION = CARTPOLE / "replay" / "numpy"
# SIGINTs per test: spread over the run's duration, each landing on the session that is
# going at that moment (translate, then resume after resume), so 20 cost a few runs' time.
MOMENTS = int(os.environ.get("ENVPORT_TEST_INTERRUPTS", "20"))
SEED = int(os.environ.get("ENVPORT_TEST_SEED", "20261123"))
# The moments start here: before it, Python is still starting up (no envport code runs).
EARLIEST_S = 0.3
# A run that reports success after the signal was sent must have been leaving already.
LEAVING_S = 3.0


# --- helpers ----------------------------------------------------------------------------------


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "envport", *args]


def fast_spec(directory: Path) -> Path:
    """The CartPole spec with the translate tests' test-sized budgets."""
    data = load_spec(CARTPOLE).model_dump(mode="json", exclude_none=True)
    levels = data["levels"]
    levels["l3"].update(episodes=30)
    levels["l1"].update(examples=200)
    levels["l2"].update(examples=10)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "envport.toml").write_text(dumps(data, "CartPole with test-sized budgets"))
    if (CARTPOLE / "probes").is_dir():
        shutil.copytree(CARTPOLE / "probes", directory / "probes", dirs_exist_ok=True)
    return directory


def translate_args(spec: Path, out: Path) -> list[str]:
    model = f"replay:{SESSION}"
    return ["translate", str(spec), "--target", "numpy", "--model", model, "--out", str(out)]


def events(run: Path) -> list[dict[str, Any]]:
    records = []
    transcript = run / "transcript.jsonl"
    if not transcript.is_file():
        return []
    for line in transcript.read_text().splitlines():
        with contextlib.suppress(ValueError):  # a line torn by a kill
            records.append(json.loads(line))
    return records


def repairs(run: Path) -> set[str]:
    """The repair requests a run made, by what they asked for."""
    return {
        json.dumps(e["purpose"], sort_keys=True)
        for e in events(run)
        if e["event"] == "prompt" and e["purpose"]["phase"] == "repair"
    }


def status(run: Path) -> str:
    return json.loads((run / "run.json").read_text())["status"]


def runs_in(out: Path) -> list[Path]:
    return sorted(p for p in out.iterdir() if (p / "run.json").is_file()) if out.is_dir() else []


def assert_no_port_blamed(run: Path) -> None:
    """Nothing recorded says a port worker died: a signal is the driver's to judge."""
    checks = sorted((run / "cache" / "checks").glob("*.json"))
    recorded = [json.dumps(e) for e in events(run) if e["event"] == "check"]
    recorded += [path.read_text() for path in checks]
    for text in recorded:
        assert "killed by signal" not in text and "port worker died" not in text, text[:500]


@dataclass
class Session:
    code: int
    stdout: str
    stderr: str
    signalled: bool  # False: it ended before the moment came
    after_signal_s: float = 0.0


def interrupt_at(args: list[str], moment: float, sig: int = signal.SIGINT) -> Session:
    """Start `envport ARGS` in a process group of its own and, `moment` seconds in, send
    the group `sig` as a terminal does."""
    process = subprocess.Popen(
        command(*args),
        cwd=ROOT,
        env=clean_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        process.wait(timeout=moment)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, sig)
        sent = time.monotonic()
        stdout, stderr = process.communicate(timeout=120)
        return Session(process.returncode, stdout, stderr, True, time.monotonic() - sent)
    finally:
        if process.poll() is None:
            process.kill()
    stdout, stderr = process.communicate()
    return Session(process.returncode, stdout, stderr, False)


def spread(rng: random.Random, count: int, start: float, end: float) -> list[float]:
    """One moment in each of `count` equal slices of [start, end], in random order."""
    width = (end - start) / count
    moments = [start + (index + rng.random()) * width for index in range(count)]
    rng.shuffle(moments)
    return moments


class Moments:
    """The moments to signal at: `spread` over [start, end], where `end` is how long one
    uninterrupted session took, until half of `count` signals have landed in a session.
    A session that ends before its moment says the machine now runs faster than when `end`
    was measured (the load fell, or a resume had less left to do): the moments still to
    come shrink toward `start` by a quarter, and once the slices are spent more are drawn
    from the shrunk window, up to `3 * count` sessions. With fixed moments a loaded
    machine's slow first session left only 9 of 20 signals landing."""

    def __init__(self, rng: random.Random, count: int, start: float, end: float) -> None:
        self.rng, self.count, self.start, self.end = rng, count, start, end
        self.planned = spread(rng, count, start, end)
        self.scale = 1.0
        self.landed = 0
        self.sessions = 0

    def __iter__(self) -> Iterator[float]:
        while self.sessions < 3 * self.count and (self.planned or self.landed < self.count // 2):
            base = self.planned.pop() if self.planned else self.rng.uniform(self.start, self.end)
            self.sessions += 1
            yield self.start + (base - self.start) * self.scale

    def ended_first(self) -> None:
        self.scale *= 0.75

    def signal_landed(self) -> None:
        self.landed += 1


def assert_clean_stop(session: Session, what: str) -> None:
    both = session.stdout + session.stderr
    # The end of stderr first: pytest shortens long messages from the bottom.
    said = f"{what}: exit {session.code}; stderr ends {session.stderr.splitlines()[-6:]}"
    assert session.code == 130, f"{said}\n{both[-3000:]}"
    clean = "Traceback" not in both and "Exception ignored" not in both
    assert clean and "never retrieved" not in both, f"{said}\n{both[-3000:]}"


# --- fast: the parts ------------------------------------------------------------------------


def test_port_workers_run_in_sessions_of_their_own() -> None:
    with PortWorker(timeout=60) as worker:
        worker.request(Ping())
        pid = worker.process.pid
        # A terminal's Ctrl-C goes to its foreground process group: not to the worker's.
        assert os.getpgid(pid) != os.getpgid(0)
        assert os.getsid(pid) == pid


SWALLOWING = """
import os, signal, sys, time
from envport import interrupts
interrupts.install()

class Finalised:
    def __del__(self):
        os.kill(os.getpid(), getattr(signal, sys.argv[1]))
        for _ in range(200000):  # the handler runs in here, where Python cannot raise it out
            pass

try:
    Finalised()  # dropped at once: its __del__ runs now
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        pass
    print("not interrupted")
except KeyboardInterrupt as interrupt:
    print("interrupted", interrupt.exit_code)
"""


@pytest.mark.parametrize(("sig", "code"), [("SIGINT", 130), ("SIGTERM", 143)])
def test_an_interrupt_a_finaliser_swallows_is_raised_again(sig: str, code: int) -> None:
    result = subprocess.run(
        [sys.executable, "-c", SWALLOWING, sig],
        capture_output=True,
        text=True,
        timeout=60,
        env=user_env(),
    )
    assert result.stdout.strip() == f"interrupted {code}", result.stdout + result.stderr
    assert "Exception ignored" not in result.stderr, result.stderr


def test_sigterm_mid_check_stops_the_run_and_caches_no_verdict(tmp_path: Path) -> None:
    spec = fast_spec(tmp_path / "cartpole")
    out = tmp_path / "runs"
    process = subprocess.Popen(
        command(*translate_args(spec, out)),
        cwd=ROOT,
        env=clean_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not any(e["event"] == "edit" for run in runs_in(out) for e in events(run)):
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "no edit"
            time.sleep(0.01)
        time.sleep(0.2)  # into the first module check (which takes a second or more)
        os.killpg(process.pid, signal.SIGTERM)
        stdout, stderr = process.communicate(timeout=60)
    finally:
        process.kill()
    (run,) = runs_in(out)
    assert process.returncode == 143, stdout + stderr
    assert f"envport: stopped by SIGTERM at step 0; continue with: envport resume {run}" in stdout
    state = json.loads((run / "run.json").read_text())
    assert (state["status"], state["reason"]) == ("interrupted", "stopped by SIGTERM")
    assert not [e for e in events(run) if e["event"] == "check"]
    assert not list((run / "cache" / "checks").glob("*.json")), "a cut-short check was cached"


# --- slow: SIGINT at moments spread over whole runs -------------------------------------------


@pytest.mark.slow
def test_sigint_at_moments_spread_over_a_translate_then_resume_verifies(tmp_path: Path) -> None:
    spec = fast_spec(tmp_path / "cartpole")
    started = time.monotonic()
    reference = subprocess.run(
        command(*translate_args(spec, tmp_path / "reference")),
        cwd=ROOT,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    duration = time.monotonic() - started
    assert reference.returncode == 0, reference.stdout + reference.stderr
    (uninterrupted,) = runs_in(tmp_path / "reference")
    expected = repairs(uninterrupted)
    assert expected, "the session's first env module needs a repair"

    moments = Moments(random.Random(SEED), MOMENTS, EARLIEST_S, duration)
    run: Path | None = None
    finished: list[Path] = []
    stopped = 0
    for number, moment in enumerate(moments):
        out = tmp_path / f"chain-{len(finished)}"
        args = ["resume", str(run)] if run else translate_args(spec, out)
        session = interrupt_at(args, moment)
        what = f"SIGINT {number} at {moment:.2f} s of `{args[0]}`"
        if not session.signalled or session.code == 0:
            # The session ended first (or was leaving when the signal came): verified.
            assert session.code == 0, f"{what}: exit {session.code}\n{session.stdout[-2000:]}"
            assert session.after_signal_s < LEAVING_S, f"{what}: ran on after the signal"
            (run,) = runs_in(out) if run is None else (run,)
            assert status(run) == "verified"
            finished.append(run)
            run = None
            moments.ended_first()
            continue
        stopped += 1
        moments.signal_landed()
        assert_clean_stop(session, what)
        made = runs_in(out) if run is None else [run]
        if not made:  # stopped before the run existed: nothing half-made is left
            assert not out.is_dir() or not any(out.iterdir()), what
            assert "before the run began; nothing was saved" in session.stderr, what
            continue
        (run,) = made
        both = session.stdout + session.stderr
        assert f"continue with: envport resume {run}" in both, f"{what}\n{both}"
        assert status(run) != "stopped", what
        assert_no_port_blamed(run)
    if run is not None:
        finished.append(run)
    assert stopped >= MOMENTS // 2, f"only {stopped} of {MOMENTS} signals landed in a run"

    for run in finished:
        resumed = subprocess.run(
            command("resume", str(run)),
            cwd=ROOT,
            env=clean_env(),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert resumed.returncode == 0, resumed.stdout + resumed.stderr
        assert status(run) == "verified"
        assert repairs(run) <= expected, (run, repairs(run) - expected)
        assert_no_port_blamed(run)


def batch_file(directory: Path, spec: Path, names: tuple[str, ...] = ("one", "two")) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "BATCH.toml"
    runs = "".join(f'\n[[runs]]\nname = "{name}"\n' for name in names)
    path.write_text(
        f'concurrency = 2\n[defaults]\nspec = "{spec}"\ntarget = "numpy"\n'
        f'model = "replay:{SESSION}"\n{runs}'
    )
    return path


ONE = ("one",)


def batch_runs(path: Path) -> dict[str, Path]:
    out = path.parent / "runs" / "BATCH"
    return {run.name: run for run in runs_in(out)}


def batch_statuses(path: Path) -> set[str]:
    """How the batch's notes label its runs (none yet if it was stopped while starting)."""
    notes = path.parent / "runs" / "BATCH" / "batch.json"
    runs = json.loads(notes.read_text())["runs"] if notes.is_file() else {}
    return {record.get("status", "not launched") for record in runs.values()}


@pytest.mark.slow
def test_sigterm_stops_a_batch_and_its_runs_as_ctrl_c_does(tmp_path: Path) -> None:
    path = batch_file(tmp_path, fast_spec(tmp_path / "cartpole"))
    process = subprocess.Popen(
        command("batch", str(path)),
        cwd=ROOT,
        env=clean_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not (
            len(batch_runs(path)) == 2
            and all(any(e["event"] == "edit" for e in events(r)) for r in batch_runs(path).values())
        ):
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the runs never got going"
            time.sleep(0.01)
        os.killpg(process.pid, signal.SIGTERM)
        stdout, stderr = process.communicate(timeout=120)
    finally:
        process.kill()
    assert process.returncode == 143, stdout + stderr
    assert f"to continue: envport batch {path}" in stdout
    assert batch_statuses(path) == {"interrupted"}, stdout
    for run in batch_runs(path).values():
        # Each run got the one SIGINT the batch passes on, and stopped as Ctrl-C stops it.
        state = json.loads((run / "run.json").read_text())
        assert (state["status"], state["reason"]) == ("interrupted", "interrupted by the user")
        assert_no_port_blamed(run)


@pytest.mark.slow
def test_sigint_at_moments_spread_over_a_batch_then_running_it_again_verifies(
    tmp_path: Path,
) -> None:
    spec = fast_spec(tmp_path / "cartpole")
    # One run: stopping several at once is the SIGTERM test's; this one is about moments.
    reference = batch_file(tmp_path / "reference", spec, ONE)
    started = time.monotonic()
    result = subprocess.run(
        command("batch", str(reference)),
        cwd=ROOT,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    duration = time.monotonic() - started
    assert result.returncode == 0, result.stdout + result.stderr
    expected = set().union(*(repairs(run) for run in batch_runs(reference).values()))
    assert expected, "the session's first env module needs a repair"

    moments = Moments(random.Random(SEED + 1), MOMENTS, EARLIEST_S, duration)
    batches = [batch_file(tmp_path / "chain-0", spec, ONE)]
    stopped = 0
    for number, moment in enumerate(moments):
        path = batches[-1]
        session = interrupt_at(["batch", str(path)], moment)
        what = f"SIGINT {number} at {moment:.2f} s of a batch"
        if not session.signalled or session.code == 0:
            assert session.code == 0, f"{what}: exit {session.code}\n{session.stdout[-3000:]}"
            assert session.after_signal_s < LEAVING_S, f"{what}: ran on after the signal"
            batches.append(batch_file(tmp_path / f"chain-{len(batches)}", spec, ONE))
            moments.ended_first()
            continue
        stopped += 1
        moments.signal_landed()
        assert_clean_stop(session, what)
        # Every run the batch stopped is interrupted: not stopped, killed or failed.
        statuses = batch_statuses(path)
        assert statuses <= {"interrupted", "verified", "not launched"}, (what, statuses)
        for run in batch_runs(path).values():
            assert status(run) != "stopped", (what, run)
            assert_no_port_blamed(run)
    assert stopped >= MOMENTS // 2, f"only {stopped} of {MOMENTS} signals landed in a batch"

    for path in batches:
        # Run again, as the batch says: no --retry-failed, whatever the moment of the stop.
        again = subprocess.run(
            command("batch", str(path)),
            cwd=ROOT,
            env=clean_env(),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert again.returncode == 0, again.stdout + again.stderr
        found = batch_runs(path)
        assert sorted(found) == ["one-numpy-replay-numpy"], found
        for run in found.values():
            assert status(run) == "verified"
            assert repairs(run) <= expected, (run, repairs(run) - expected)
            assert_no_port_blamed(run)
