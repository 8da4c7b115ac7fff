"""The optimisation phase on a structured port: `envport translate examples/minigrid_doorkey
--target jax --optimize` offline, from the example's hand-written, labelled replay session
(examples/minigrid_doorkey/replay/jax): a correct port whose visibility pass is one indexed
update per cell, then two optimisation rounds (visibility as bit rows in a scan; the image
read from a padded grid of packed cells). Each round is verified and measured by the phase
itself, and kept exactly when its gain meets the phase's bar; on a quiet machine both are
kept and the run ends on the example's known-good (optimised) JAX port.

Real subprocesses, real git, real verifier and bench workers. Budgets are cut (the levels'
sizes, the bench's steps) so the run fits the slow tier. Each round's gain was 2.25x at
B=4096 in a full run on a loaded machine, far above the 5% the phase asks for; but load can
hide any gain (Seaquest's 3.8x round measured 0.87x beside four busy engineers), so the test
asserts the phase's rule, not the outcome.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import ROOT, user_env

DOORKEY = ROOT / "examples" / "minigrid_doorkey"
SESSION = DOORKEY / "replay" / "jax"
CUTS = {
    "[levels.l1]\nexamples = 400": "[levels.l1]\nexamples = 100",
    "[levels.l2]\nexamples = 40": "[levels.l2]\nexamples = 10",
    "[levels.l3]\nepisodes = 100": "[levels.l3]\nepisodes = 20",
    "[coverage]\n": "[coverage]\nexplore_steps = 2000\n",
}


def small_doorkey(directory: Path) -> Path:
    shutil.copytree(DOORKEY, directory, ignore=shutil.ignore_patterns("ports", "replay"))
    spec = directory / "envport.toml"
    text = spec.read_text()
    for old, new in CUTS.items():
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    spec.write_text(text)
    return directory


def test_the_session_is_labelled_hand_written_and_ends_on_the_known_good_port() -> None:
    entries = json.loads((SESSION / "session.json").read_text())["entries"]
    assert {e["source"] for e in entries} == {"hand-written"}
    assert [(e["phase"], e["iteration"]) for e in entries if e["phase"] == "optimize"] == [
        ("optimize", 1),
        ("optimize", 2),
    ]
    last = (SESSION / "002-optimize.md").read_text()
    view = (DOORKEY / "ports" / "jax" / "view.py").read_text()
    # The last round's view.py is the known-good port's (less its "not model output" line).
    body = last[last.index("```python\n") + len("```python\n") : last.rindex("```")]
    note = "\nHand-written known-good port: a test subject for the verifier, not model output.\n"
    assert body.strip() == view.replace(note, "").strip()


@pytest.mark.slow
def test_both_rounds_are_verified_measured_and_decided_by_the_rule(tmp_path: Path) -> None:
    spec = small_doorkey(tmp_path / "doorkey")
    out = tmp_path / "runs"
    words = [
        "translate", str(spec), "--target", "jax", "--model", f"replay:{SESSION}",
        "--out", str(out), "--optimize", "--optimize-rounds", "2",
        "--bench-batch-sizes", "32,4096", "--bench-steps", "50", "--bench-repeats", "3",
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
    assert [a["round"] for a in attempts] == [1, 2]
    outcome = (run / "reports" / "outcome.md").read_text()
    for attempt in attempts:
        # Verified (the round's port reached the bench) and measured by the phase itself,
        # both versions in one session, the largest batch deciding. Whether a gain shows is
        # the machine's load's to say, so the phase is held to its rule, not to an outcome.
        assert attempt["bench_error"] is None
        before, after = attempt["sps_before"]["4096"], attempt["sps_after"]["4096"]
        assert abs(attempt["ratio"] - after / before) < 1e-3
        assert attempt["kept"] is (attempt["ratio"] >= attempt["min_ratio"])
        decided = "kept" if attempt["kept"] else "reverted"
        assert f"| {attempt['round']} | {decided} |" in outcome
    kept = sum(a["kept"] for a in attempts)
    assert state["reason"].startswith(f"every level passes; {kept} of 2 optimisation rounds")
    port = (run / "port" / "view.py").read_text()
    # Round 1's visibility pass (bit rows in a scan) is what the run ends on when it is kept;
    # with no round kept, the session's first port, one indexed update per cell.
    if attempts[0]["kept"]:
        assert "jax.lax.scan" in port
    if not kept:
        assert "jax.lax.scan" not in port
