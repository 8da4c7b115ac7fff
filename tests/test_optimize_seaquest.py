"""The optimisation phase on a game with many objects: `envport translate
examples/minatar_seaquest --target jax --optimize` offline, from the example's hand-written,
labelled replay session (examples/minatar_seaquest/replay/jax). The session's port is the
known-good port as it stood before issue 51: correct, and slower than MinAtar's own Python
at B=4096 (a stable sort of each object list every step, and the observation marked on an
[objects, 10, 10] grid per list). Three optimisation rounds follow: the lists compacted by
rank counts and a gather instead of a sort, then the observation built as row bits, then
the planes put side by side without a concatenate and the records held as int8. Each round
is verified and measured by the phase itself, all are kept, and the run ends on the
example's known-good (optimised) JAX port.

Real subprocesses, real git, real verifier and bench workers. The slow test runs the first
two rounds (285 s on the 2-core machine alone), their budgets cut (the levels' sizes, the
bench's steps) to fit the slow tier. The third round's gain was 15% back to back (1.54x by
the phase's own timing, 1,026 s for all three rounds with a bench beside it): within what a
loaded machine moves a timing, so whether it is kept is not asserted where load could trip
it; its files are held to the known-good port's below.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import ROOT, user_env, with_budgets

SEAQUEST = ROOT / "examples" / "minatar_seaquest"
SESSION = SEAQUEST / "replay" / "jax"
NOTE = "Hand-written known-good port, not model output.\n"
ENV_NOTE = "\nHand-written known-good port: a test subject for the verifier, not model output.\n"
# The levels' sizes cut so the run fits the slow tier.
SMALL = {
    "levels.l1": {"examples": 60},
    "levels.l2": {"examples": 8},
    "levels.l3": {"episodes": 8},
    "coverage": {"explore_steps": 1000},
}


def _answer_body(name: str) -> str:
    text = (SESSION / name).read_text()
    return text[text.index("```python\n") + len("```python\n") : text.rindex("```")]


def _known_good(name: str) -> str:
    """The known-good port's file less its "not model output" line (the answers' text)."""
    text = (SEAQUEST / "ports" / "jax" / name).read_text()
    return text.replace(ENV_NOTE, "").replace(" " + NOTE, "\n").replace(NOTE, "")


def test_the_session_optimises_three_times_and_ends_on_the_known_good_port() -> None:
    entries = json.loads((SESSION / "session.json").read_text())["entries"]
    assert {e["source"] for e in entries} == {"hand-written"}
    assert [(e["phase"], e["iteration"]) for e in entries if e["phase"] == "optimize"] == [
        ("optimize", 1),
        ("optimize", 2),
        ("optimize", 3),
    ]
    port = SEAQUEST / "ports" / "jax"
    # Each round's last file is the known-good port's (less its "not model output" line).
    assert _answer_body("001-optimize.md") == _known_good("lists.py")
    round_3 = (SESSION / "003-optimize.md").read_text()
    for name in ("env.py", "view.py"):
        head = f"### File: {name}\n```python\n"
        start = round_3.index(head) + len(head)
        assert round_3[start : round_3.index("```\n", start)] == _known_good(name), name
    # Round 2's planes were stacked (a concatenate), which round 3 replaces.
    assert "jnp.stack(planes" in _answer_body("002-optimize.md")
    assert "jnp.stack(planes" not in (port / "view.py").read_text()
    # The session's own port before the rounds is the slow one the rounds replace.
    assert "argsort" in _answer_body("000-generate-lists.md")
    assert "argsort" not in (port / "lists.py").read_text()


@pytest.mark.slow
def test_every_optimisation_round_is_verified_measured_and_kept(tmp_path: Path) -> None:
    spec = with_budgets(SEAQUEST, tmp_path / "seaquest", SMALL)
    out = tmp_path / "runs"
    words = [
        "translate", str(spec), "--target", "jax", "--model", f"replay:{SESSION}",
        "--out", str(out), "--optimize", "--optimize-rounds", "2",
        # One size, the one that decides; best of three, as the test was first run with.
        "--bench-batch-sizes", "4096", "--bench-steps", "50", "--bench-repeats", "3",
    ]  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "envport", *words],
        capture_output=True, text=True, timeout=2400, cwd=ROOT, env=user_env(),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    (run,) = out.iterdir()
    state = json.loads((run / "run.json").read_text())
    assert state["status"] == "verified", state["reason"]
    assert state["reason"].startswith("every level passes; 2 of 2 optimisation rounds kept")
    attempts = [
        json.loads(line)
        for line in (run / "transcript.jsonl").read_text().splitlines()
        if '"optimize_attempt"' in line
    ]
    assert [(a["round"], a["kept"]) for a in attempts] == [(1, True), (2, True)]
    for attempt in attempts:
        # Measured by the phase itself, both versions in one session, the largest batch deciding.
        assert attempt["ratio"] >= 1.05
        assert attempt["sps_after"]["4096"] > attempt["sps_before"]["4096"]
    outcome = (run / "reports" / "outcome.md").read_text()
    assert all(f"| {k} | kept |" in outcome for k in (1, 2))
    # Each round's file is the session's answer: round 1's lists.py (the known-good port's),
    # round 2's view.py.
    assert (run / "port" / "lists.py").read_text() == _known_good("lists.py")
    assert (run / "port" / "view.py").read_text() == _answer_body("002-optimize.md")
