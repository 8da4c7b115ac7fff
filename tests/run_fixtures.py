"""Runs for the batch, review and report tests: a test-sized spec and a replay session whose
bug only free-running L3 rollouts expose (so a report has a divergence to plot over steps).

The session's answers are HAND-WRITTEN for these tests, built from the labelled NumPy
session in examples/cartpole/replay/numpy: its physics module with gravity 9.801 instead
of 9.8 (each step is within L1's tolerance, the drift over an episode is not), its
repaired entry module, and a repair that restores 9.8. The first answer's prose carries
HTML and a terminal escape, as a hostile or careless model's might.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from envport.runs.spec_copy import dumps
from envport.spec import load_spec

from helpers import CARTPOLE, ROOT, user_env

NUMPY_SESSION = CARTPOLE / "replay" / "numpy"
PHYSICS = (NUMPY_SESSION / "000-generate-physics.md").read_text()
ENV_BUGGY = (NUMPY_SESSION / "000-generate-env.md").read_text()
REPAIR = (NUMPY_SESSION / "001-repair.md").read_text()

HOSTILE = (
    'Here is the module. <script>document.title="pwned"</script>'
    "<img src=x onerror=\"document.title='pwned'\"> \x1b]0;retitled\x07\x1b[2J"
)
# Gravity off by 1e-4: no single step leaves the spec's tolerance (L1 and resync pass),
# but free-running drifts out of it in a few of L3's first 300 episodes.
DRIFTING_PHYSICS = HOSTILE + "\n\n" + PHYSICS.replace("GRAVITY = 9.8\n", "GRAVITY = 9.801\n")
CORRECT_ENV = (
    "The entry module.\n\n"
    + REPAIR[REPAIR.index("### File: env.py") : REPAIR.index("### File: tests/")]
)
PHYSICS_FIX = (
    "Free-running drift in theta_dot means a constant is off: the reference's gravity is 9.8, "
    "I wrote 9.801.\n\n" + PHYSICS[PHYSICS.index("### File: physics.py") :]
)


def clean_env(**extra: str) -> dict[str, str]:
    """The environment of a user with no API keys set, plus `extra`."""
    return user_env(**extra)


def envport(
    *args: str, env: dict[str, str] | None = None, timeout: float = 240
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "envport", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env=env or clean_env(),
    )


def fast_spec(directory: Path) -> Path:
    """The CartPole spec with test-sized budgets (it still catches both sessions' bugs).

    L1 and L2 are cut; L3 is raised (it costs a fraction of a second): the drifting
    session's bug shows only in free-running, in about one episode in a hundred."""
    data = load_spec(CARTPOLE).model_dump(mode="json", exclude_none=True)
    levels = data["levels"]
    levels["l3"].update(episodes=300)
    levels["l1"].update(examples=60)
    levels["l2"].update(examples=10)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "envport.toml").write_text(dumps(data, "CartPole with test-sized budgets"))
    shutil.copytree(CARTPOLE / "probes", directory / "probes", dirs_exist_ok=True)
    return directory


def drift_session(directory: Path) -> Path:
    """A hand-written NumPy replay session: drifting physics, found by L3, then repaired."""
    directory.mkdir(parents=True, exist_ok=True)
    answers = {
        ("generate", "physics", 0): ("000-generate-physics.md", DRIFTING_PHYSICS),
        ("generate", "env", 0): ("000-generate-env.md", CORRECT_ENV),
        ("repair", None, 1): ("001-repair.md", PHYSICS_FIX),
    }
    entries = []
    for (phase, module, iteration), (name, text) in answers.items():
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


def translate_drift_run(tmp: Path) -> Path:
    """Translate CartPole to NumPy with the drift session; returns the run directory."""
    spec = fast_spec(tmp / "spec")
    session = drift_session(tmp / "session")
    out = tmp / "runs"
    result = envport(
        "translate", str(spec), "--target", "numpy", "--model", f"replay:{session}",
        "--out", str(out),
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    runs = [p for p in out.iterdir() if p.is_dir()]
    assert len(runs) == 1, runs
    return runs[0]


def bare_run(out: Path, target: str = "numpy", model: str = "replay:/nowhere") -> Path:
    """A run directory as `envport translate` creates it before its first step (frozen spec,
    empty port, first commit), made by the same code without driving it."""
    from envport.runs.layout import create_run, new_run_id
    from envport.runs.state import RunState

    spec_file = CARTPOLE / "envport.toml"
    state = RunState(
        run_id=new_run_id("cartpole", target),
        spec_source=str(spec_file),
        spec_name="cartpole",
        target=target,  # type: ignore[arg-type]
        model=model,
    )
    return create_run(out, spec_file, state).root


def in_terminal(args: list[str], env: dict[str, str], timeout: float = 60) -> tuple[int, bytes]:
    """Run the command line with a pseudo-terminal as stdin, stdout and stderr, as a user at a
    terminal would; returns the exit code and everything the terminal received."""
    import pty

    main, secondary = pty.openpty()
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "envport", *args],
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
        return process.wait(timeout=timeout), received
    finally:
        os.close(main)
