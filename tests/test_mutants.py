"""Mutation self-check: every behaviour-changing mutant of the CartPole ports is caught.

Slow by nature (about 40 verify runs, each replayed); it is the verifier's own yardstick.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from envport.verifiers.selfcheck import Mutant, apply_mutant, load_mutants, run_selfcheck

from helpers import CARTPOLE


def test_mutant_edits_apply_exactly_once(tmp_path: Path) -> None:
    mutants = load_mutants(CARTPOLE)
    assert len({m.id for m in mutants}) == len(mutants)
    assert len([m for m in mutants if not m.equivalent]) >= 20
    for mutant in mutants:
        port = apply_mutant(mutant, CARTPOLE / "ports" / mutant.target, tmp_path / mutant.id)
        assert mutant.new in (port / mutant.file).read_text()


def test_a_stale_mutant_is_an_error(tmp_path: Path) -> None:
    stale = Mutant(
        id="stale", target="numpy", file="physics.py", old="GRAVITY = 1.0", new="x", what=""
    )
    with pytest.raises(ValueError, match="occurs 0 times"):
        apply_mutant(stale, CARTPOLE / "ports" / "numpy", tmp_path / "stale")


@pytest.mark.slow
def test_every_behaviour_changing_mutant_is_caught_and_replays() -> None:
    results = run_selfcheck(CARTPOLE)
    table = "\n".join(
        f"{r.id:32} caught_by={','.join(r.caught_by) or '-':22} replay={r.replay_matches}"
        for r in results
    )
    print(table)
    print("first level to catch:", dict(Counter(r.caught_by[0] for r in results if r.caught_by)))
    not_ok = [r.id for r in results if not r.ok]
    assert not not_ok, f"mutants not handled correctly: {not_ok}\n{table}"
    for r in results:
        if not r.equivalent:
            assert r.first is not None and r.first.replay.startswith("envport verify")
