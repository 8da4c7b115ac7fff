"""A port that raises is a failed check like any other (issue 46): the check that met the
raise fails with the port's own words, the start state, the action and the replay line; the
other checks still run and the table of checks is printed. A worker that dies or hangs is
another matter (tests/test_verify_cli.py: one line)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from helpers import CARTPOLE, plant_code, run_envport, user_env

# Raised on every step pushing the cart right from the right half: L1 draws such states
# among its first examples, and the escape sequence in the message must be shown, not obeyed.
RAISE_RIGHT = (
    "if (np.asarray(actions) == 1).any() and (self.physics[:, 0] > 0).any():\n"
    "    raise ValueError('pushed right of centre \\x1b[2J')"
)


def test_a_port_raising_in_step_fails_the_check_with_its_start_state_action_and_replay(
    numpy_port_copy: Path, tmp_path: Path
) -> None:
    plant_code(numpy_port_copy, RAISE_RIGHT, where="step")
    report_path = tmp_path / "report.json"
    done = run_envport(
        "verify",
        str(CARTPOLE),
        "--port",
        str(numpy_port_copy),
        "--target",
        "numpy",
        "--examples",
        "20",
        "--episodes",
        "4",
        "--no-shrink",
        "--json",
        str(report_path),
        env=user_env(),
    )
    assert done.returncode == 1, done.stdout + done.stderr
    out = done.stdout
    # The table of checks, not one line on stderr.
    assert "envport: in l1" not in done.stderr, done.stderr
    lines = out.splitlines()
    assert "pass l1.physics.dynamics: 20 examples, 20 steps compared" in lines, out
    failed = lines.index(next(line for line in lines if line.startswith("FAIL l1.transition")))
    shown = "\n".join(lines[failed : failed + 16])
    assert "the port raised" in shown and "ValueError: pushed right of centre" in shown, shown
    # The port's text made inert: the escape shown, never sent to the terminal.
    assert "\\x1b[2J" in shown and "\x1b" not in out
    assert "  start state: {physics: [" in shown and "  actions up to the divergence: [1]" in shown
    assert "  replay: envport verify" in shown and "--levels l1" in shown
    # The levels after L1 ran, each with its line, and the verdict closes the table.
    assert any(line.startswith(("pass l2.", "FAIL l2.")) for line in lines), out
    # L3 plays the plan again in parts to say which episode and step raised.
    rollouts = lines.index("FAIL l3: 1 episodes, 0 steps compared, 1 diverged")
    assert re.match(
        r"L3 free, episode \d+ \(policy \w+, reset seed \d+\), step \d+: the port raised",
        lines[rollouts + 1],
    ), out
    l3_replay = next(line for line in lines[rollouts:] if line.startswith("  replay: "))
    assert "--levels l3" in l3_replay and "--episode " in l3_replay, l3_replay
    assert lines[-1].startswith("DIVERGED: backend numpy"), out

    report = json.loads(report_path.read_text())
    assert report["error"] is None
    transition = next(lv for lv in report["levels"] if lv["mode"] == "transition")
    divergence = transition["divergences"][0]
    # The start state the port raised on: a cart right of centre, pushed right.
    assert divergence["start_state"]["physics"][0] > 0 and divergence["action_prefix"] == [1]
