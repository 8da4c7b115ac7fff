"""The optimisation phase on a game with many objects: `envport translate
examples/minatar_seaquest --target jax --optimize` offline, from the example's hand-written,
labelled replay session (examples/minatar_seaquest/replay/jax). The session's port is the
known-good port as it stood before issue 51: correct, and slower than MinAtar's own Python
at B=4096 (a stable sort of each object list every step, and the observation marked on an
[objects, 10, 10] grid per list). Four optimisation rounds follow: the lists compacted by
rank counts and a gather instead of a sort, then the observation built as row bits, then
the planes put side by side without a concatenate and the records held as int8, then each
list updated whole with the slot-by-slot walk kept for the rare frame needing it. Each round
is verified and measured by the phase itself, all are kept, and the run ends on the
example's known-good (optimised) JAX port.

Real subprocesses, real git, real verifier and bench workers. The slow test runs the first
round (the sort replaced: 3.8x back to back on a quiet machine), its budgets cut (the levels'
sizes, the bench's steps) to fit the slow tier; round after round on a kept port is
tests/test_optimize_doorkey.py's. Whether a gain shows is the machine's load's to say (beside
four busy engineers the same round measured 0.87x), so the test holds the phase to its rule:
the round verified and measured in one session, kept exactly when its ratio meets the bar,
and the run's port the round's files exactly when kept. The later rounds' files are held to
the known-good port's below.
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
    "coverage": {"explore_steps": 0},
    # The sampled-step check's n (its DKW design asks 12,656 steps a side): the rounds'
    # rules are checked by L1's states, not by its power against a shifted draw.
    "randomness": {"samples": 320},
}


def _answer_body(name: str) -> str:
    text = (SESSION / name).read_text()
    return text[text.index("```python\n") + len("```python\n") : text.rindex("```")]


def _known_good(name: str) -> str:
    """The known-good port's file less its "not model output" line (the answers' text)."""
    text = (SEAQUEST / "ports" / "jax" / name).read_text()
    return text.replace(ENV_NOTE, "").replace(" " + NOTE, "\n").replace(NOTE, "")


def test_the_session_optimises_four_times_and_ends_on_the_known_good_port() -> None:
    entries = json.loads((SESSION / "session.json").read_text())["entries"]
    assert {e["source"] for e in entries} == {"hand-written"}
    assert [(e["phase"], e["iteration"]) for e in entries if e["phase"] == "optimize"] == [
        ("optimize", 1),
        ("optimize", 2),
        ("optimize", 3),
        ("optimize", 4),
    ]
    port = SEAQUEST / "ports" / "jax"
    # The last round's files are the known-good port's (less its "not model output" line),
    # every one of them: the port is what the session ends on.
    round_4 = (SESSION / "004-optimize.md").read_text()
    named = sorted(path.name for path in port.glob("*.py"))
    assert named == ["env.py", "lists.py", "rules.py", "sweeps.py", "view.py"]
    for name in named:
        head = f"### File: {name}\n```python\n"
        start = round_4.index(head) + len(head)
        assert round_4[start : round_4.index("```\n", start)] == _known_good(name), name
    # Round 2's planes were stacked (a concatenate), which round 3 replaces.
    assert "jnp.stack(planes" in _answer_body("002-optimize.md")
    assert "jnp.stack(planes" not in _answer_body("003-optimize.md")
    # Round 1 compacts by counting, not by the session's first port's sort; round 4 walks
    # a list slot by slot only in the frame that needs it.
    assert "argsort" in _answer_body("000-generate-lists.md")
    assert "argsort" not in _answer_body("001-optimize.md")
    assert "while_loop" in (port / "env.py").read_text()
    assert "fori_loop" not in (port / "sweeps.py").read_text()


@pytest.mark.slow
def test_the_first_optimisation_round_is_verified_measured_and_kept(tmp_path: Path) -> None:
    spec = with_budgets(SEAQUEST, tmp_path / "seaquest", SMALL)
    out = tmp_path / "runs"
    words = [
        "translate", str(spec), "--target", "jax", "--model", f"replay:{SESSION}",
        "--out", str(out), "--optimize", "--optimize-rounds", "1",
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
    attempts = [
        json.loads(line)
        for line in (run / "transcript.jsonl").read_text().splitlines()
        if '"optimize_attempt"' in line
    ]
    (attempt,) = attempts
    # Verified (the round's port reached the bench) and measured by the phase itself, both
    # versions in one session, the largest batch deciding. Whether the gain shows is the
    # machine's load's to say (a run beside four busy engineers measured 113k -> 98.5k), so
    # the phase is held to its rule, not to an outcome.
    assert attempt["round"] == 1 and attempt["bench_error"] is None
    before, after = attempt["sps_before"]["4096"], attempt["sps_after"]["4096"]
    assert abs(attempt["ratio"] - after / before) < 1e-3
    kept = attempt["ratio"] >= attempt["min_ratio"]
    assert attempt["kept"] is kept
    assert state["reason"].startswith(f"every level passes; {int(kept)} of 1 optimisation rounds")
    outcome = (run / "reports" / "outcome.md").read_text()
    assert f"| 1 | {'kept' if kept else 'reverted'} |" in outcome
    # A kept round's file is the session's answer, lists.py; a reverted one leaves the
    # session's first port, which sorts.
    lists = (run / "port" / "lists.py").read_text()
    assert (lists == _answer_body("001-optimize.md")) is kept
    assert ("argsort" in lists) is not kept
