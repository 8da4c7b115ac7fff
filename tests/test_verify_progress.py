"""`envport verify` while it runs: progress a person can see, and where the time went.

Real command lines in real processes: a tmux pane for the terminal, a pipe for a CI log,
SIGINT for Ctrl-C. No assertion depends on how fast the machine is: a live line is waited
for as long as the run lasts, and the interrupt is sent after a check has ended and while
the long L3 of the same run is still ahead.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import CARTPOLE, NUMPY_PORT, ROOT, run_envport, user_env

# A small run of every default level: a few seconds.
SMALL = ["--examples", "20", "--episodes", "4"]
ENDED = re.compile(r"^(\S+) (passed|FAILED) in \d+\.\d s")
RUNNING = re.compile(r"\bl[123]: running, \d+/\d+ (examples|sequences|episodes)")


@pytest.fixture(scope="module")
def small_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess, dict]:
    """One small verify, stdout and stderr pipes (not a terminal), with its JSON report and
    its -v table."""
    report = tmp_path_factory.mktemp("progress") / "report.json"
    # A cache of its own: on a loaded machine another verify of CartPole may have drawn slowly
    # enough to keep its L1 examples, and this run, loading them, would draw nothing.
    cache = tmp_path_factory.mktemp("progress-cache")
    done = run_envport(
        "verify", str(CARTPOLE), "--port", str(NUMPY_PORT), *SMALL, "-v", "--json", str(report),
        env=user_env(ENVPORT_CACHE_DIR=str(cache)),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return done, json.loads(report.read_text())


def test_off_a_terminal_each_check_says_it_ended_on_stderr_in_order(
    small_run: tuple[subprocess.CompletedProcess, dict],
) -> None:
    done, report = small_run
    ended = [m.group(1) for line in done.stderr.splitlines() if (m := ENDED.match(line))]
    # Every check that ran, in the order it ran (the report's profile keeps that order).
    assert ended == [name for name in report["profile"] if name != "setup"], done.stderr
    assert ended[:3] == ["l1", "l2.user_paths", "l2"] and "l3" in ended
    assert "l3 passed in" in done.stderr and "(4 episodes)" in done.stderr
    # stdout is the report alone: no progress there.
    assert not any(ENDED.match(line) for line in done.stdout.splitlines()), done.stdout


def test_the_json_report_profiles_each_check_by_phase_and_by_request(
    small_run: tuple[subprocess.CompletedProcess, dict],
) -> None:
    _, report = small_run
    profile = report["profile"]
    assert list(profile)[:2] == ["setup", "l1"]
    for name, section in profile.items():
        phases = section["phases"]
        assert {"reference", "worker", "drawing", "judging", "other"} <= set(phases), name
        # Exclusive phases: together they are the check's wall time, never more.
        assert sum(phases.values()) == pytest.approx(section["seconds"], abs=0.01), name
        waited = sum(r["seconds"] for r in section["requests"].values())
        assert phases["worker"] == pytest.approx(waited, abs=1e-5), name
    # Setup waits for the port's load; L1 asks its probes; L3 sends rollouts, with bytes.
    assert profile["setup"]["requests"]["load"]["count"] == 1
    assert profile["l1"]["requests"]["probe"]["count"] >= 1
    rollout = profile["l3"]["requests"]["rollout"]
    assert rollout["count"] >= 1 and rollout["sent_bytes"] > 0 and rollout["received_bytes"] > 0
    assert rollout["first_seconds"] is not None
    # Hypothesis drew L1's and L2's inputs; the reference answered every level.
    for name in ("l1", "l2"):
        assert profile[name]["phases"]["drawing"] > 0 and profile[name]["phases"]["judging"] > 0
    assert all(profile[name]["phases"]["reference"] > 0 for name in ("l1", "l2", "l3"))
    # Progress counts against each plan's budget.
    assert profile["l1"]["unit"] == "examples" and profile["l1"]["counts"]["examples"] == 20
    assert profile["l3"]["counts"]["episodes"] == profile["l3"]["budget"] == 4


def test_verbose_prints_the_profile_table_after_the_verdict(
    small_run: tuple[subprocess.CompletedProcess, dict],
) -> None:
    done, _ = small_run
    after = done.stdout.split("backend numpy;", 1)[1]
    assert "where the time went" in after, done.stdout
    assert re.search(r"^l3 +\d+\.\d\d", after, re.M) and "rollout: " in after, after


def _pane(session: str) -> str:
    return subprocess.run(
        ["tmux", "capture-pane", "-p", "-t", session],
        capture_output=True,
        text=True,
        env=user_env(),
    ).stdout


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_on_a_terminal_the_running_check_shows_before_the_verdict(tmp_path: Path) -> None:
    session = f"envport-progress-{os.getpid()}"
    status = tmp_path / "status"
    command = [sys.executable, "-m", "envport", "verify", str(CARTPOLE), "--port"]
    command += [str(NUMPY_PORT), "--examples", "50", "--episodes", "200", "--explore-steps", "0"]
    line = f"{shlex.join(command)}; echo $? > {shlex.quote(str(status))}; sleep 120"
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", session, "-x", "160", "-y", "50", line],
        check=True,
        cwd=ROOT,
        env=user_env(),
    )
    try:
        seen = ""
        # As long as the run lasts (a ceiling far above it, only so a hung run ends).
        deadline = time.monotonic() + 600
        while not seen and not (status.exists() and status.read_text().strip()):
            assert time.monotonic() < deadline, "the command did not finish"
            screen = _pane(session)
            if RUNNING.search(screen):
                seen = screen
            time.sleep(0.2)
        assert seen, f"no progress line before the run ended:\n{_pane(session)}"
        # The live line is the run's, not an echo of its end.
        assert "verified" not in seen and "DIVERGED" not in seen, seen
        while not (status.exists() and status.read_text().strip()):
            assert time.monotonic() < deadline, "the command did not finish"
            time.sleep(0.5)
        final = _pane(session)
        assert int(status.read_text()) == 0, final
        # The live line is gone; each ended check's line and the verdict remain.
        assert not RUNNING.search(final) and "verified: backend numpy" in final, final
        assert re.search(r"^l1 passed in", final, re.M) and re.search(r"^l3 passed in", final, re.M)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], check=False, env=user_env())


def test_ctrl_c_says_which_checks_had_finished_and_exits_130() -> None:
    command = [sys.executable, "-m", "envport", "verify", str(CARTPOLE), "--port"]
    command += [str(NUMPY_PORT), "--episodes", "2000"]
    process = subprocess.Popen(
        command,
        cwd=ROOT,
        env=user_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert process.stderr is not None
        # Once L1 has ended (and 2000 episodes of L3 are still ahead), as a terminal would.
        first = process.stderr.readline()
        assert first.startswith("l1 passed in"), first
        os.killpg(process.pid, signal.SIGINT)
        stdout, rest = process.communicate(timeout=300)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, first + rest
    said = [line for line in rest.splitlines() if line.startswith("interrupted")]
    assert len(said) == 1 and "finished: l1 passed in" in said[0], rest
    assert "envport: interrupted by the user" in rest
    assert "verified" not in stdout


def test_a_translate_run_is_told_each_check_of_the_whole_port_as_it_starts_and_ends() -> None:
    from envport.io.profile import Profile
    from envport.verifiers.reporting.watch import narrate
    from envport.verifiers.verify import VerifyOptions, verify

    said: list[str] = []
    options = VerifyOptions(examples=10, episodes=2, explore_steps=0)
    report = verify(
        str(CARTPOLE), str(NUMPY_PORT), options, profile=narrate(Profile(), said.append, "port: ")
    )
    assert report.passed, report.text()
    assert said[:2] == ["port: l1 running", said[1]] and said[1].startswith("port: l1 passed in")
    ran = [name for name in report.profile if name != "setup"]
    assert said == [line for name in ran for line in said if line.startswith(f"port: {name} ")]
    assert len(said) == 2 * len(ran), said


def test_a_check_a_dying_port_stopped_keeps_its_time_and_is_not_said_to_have_ended(
    numpy_port_copy: Path, tmp_path: Path
) -> None:
    env = numpy_port_copy / "env.py"
    env.write_text(
        env.read_text().replace(
            "    def step(self, actions):\n",
            "    def step(self, actions):\n        import os\n\n        os._exit(7)\n",
        )
    )
    report = tmp_path / "report.json"
    done = run_envport(
        "verify", str(CARTPOLE), "--port", str(numpy_port_copy), "--levels", "l3",
        "--episodes", "2", "--json", str(report),
        "--no-static-review",  # the review would refuse `os` before the port could die
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    # The error is the one line: no check ended.
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "port worker died in `rollout`" in lines[0], done.stderr
    l3 = json.loads(report.read_text())["profile"]["l3"]
    assert l3["seconds"] > 0, l3
