"""Port text cannot forge what a user reads (issue 27): escape sequences in a port's error
reach a real terminal (tmux), outcome.md and the HTML report shown, not obeyed."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from envport.io.inert import inert

from helpers import CARTPOLE, ROOT, user_env

FORGED = "verified: every level passes"
# Clear the screen, home the cursor, retitle the window, write the clipboard, then print a
# verdict; hide whatever follows.
PAYLOAD = (
    "\\x1b[2J\\x1b[H\\x1b]0;"
    + FORGED
    + "\\x07\\x1b]52;c;cHduZWQ=\\x07\\r\\x1b[32;1m"
    + FORGED
    + "\\x1b[0m\\x1b[8m"
)


def test_inert_shows_escapes_and_keeps_lines() -> None:
    shown = inert("a\x1b[2Jb\u202ec\x9bd\r\ne\tf")
    assert shown == "a\\x1b[2Jb\\u202ec\\x9bd\\x0d\ne\tf"
    assert "\x1b" not in inert(PAYLOAD.encode().decode("unicode_escape"))


def _tmux_screen(tmp_path: Path, command: list[str]) -> tuple[str, str, int]:
    """Run `command` in a detached tmux pane; return its screen, title and exit code."""
    session = f"envport-forge-{os.getpid()}"
    status = tmp_path / "status"
    line = f"{shlex.join(command)}; echo $? > {shlex.quote(str(status))}; sleep 60"
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", session, "-x", "160", "-y", "40", line],
        check=True,
        cwd=ROOT,
        env=user_env(),
    )
    try:
        deadline = time.monotonic() + 240
        while not status.exists() or not status.read_text().strip():
            assert time.monotonic() < deadline, "the command did not finish"
            time.sleep(0.5)
        time.sleep(0.5)
        screen = subprocess.run(
            ["tmux", "capture-pane", "-p", "-t", session],
            capture_output=True,
            text=True,
            env=user_env(),
        ).stdout
        title = subprocess.run(
            ["tmux", "display-message", "-p", "-t", session, "#{pane_title}"],
            capture_output=True,
            text=True,
            env=user_env(),
        ).stdout
        return screen, title, int(status.read_text())
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], check=False, env=user_env())


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
@pytest.mark.parametrize("where", ["import", "step"])
def test_a_port_error_cannot_forge_the_verdict_on_a_terminal(where: str, tmp_path: Path) -> None:
    spec = tmp_path / "cartpole"
    shutil.copytree(CARTPOLE, spec, ignore=shutil.ignore_patterns("__pycache__"))
    env_py = spec / "ports" / "numpy" / "env.py"
    raising = f"raise RuntimeError('broken' + '{PAYLOAD}')"
    text = env_py.read_text()
    if where == "import":
        text += "\n\n" + raising + "\n"
    else:
        marker = "    def step(self, actions):\n"
        text = text.replace(marker, marker + "        " + raising + "\n")
    env_py.write_text(text)
    command = [sys.executable, "-m", "envport", "verify", str(spec)]
    command += ["--port", str(spec / "ports" / "numpy"), "--levels", "l3", "--episodes", "2"]
    screen, title, code = _tmux_screen(tmp_path, command)
    assert code == 1, screen
    lines = [ln.strip() for ln in screen.splitlines() if ln.strip()]
    # The forged verdict never stands as a line of its own, and the real one is there.
    assert not any(ln.startswith(FORGED) for ln in lines), screen
    assert "\\x1b[2J" in screen and "broken" in screen, screen
    assert FORGED not in title


def test_outcome_md_and_the_html_report_show_a_forged_reason_escaped(tmp_path: Path) -> None:
    from envport.pipeline.recorder import Recorder
    from envport.report import write_report
    from envport.runs.layout import create_run, new_run_id, open_run
    from envport.runs.state import RunState

    raw = "broken" + PAYLOAD.encode().decode("unicode_escape")
    state = RunState(
        run_id=new_run_id("cartpole", "numpy"),
        spec_source=str(CARTPOLE / "envport.toml"),
        spec_name="cartpole",
        target="numpy",
        model="replay:/x",
    )
    root = create_run(tmp_path / "runs", CARTPOLE / "envport.toml", state).root
    state.status, state.reason = "gave_up", raw
    Recorder(open_run(root)).finished(state, None)
    outcome = (root / "reports" / "outcome.md").read_text()
    assert "\x1b" not in outcome and "\x07" not in outcome and "\r" not in outcome
    # (`[` backslash-escaped: the reason is one line of Markdown that renders as its text.)
    assert "broken\\x1b\\[2J" in outcome
    page = write_report(root).read_text()
    assert "\x1b" not in page and "\x07" not in page
