"""Mutation self-check: every behaviour-changing mutant of the CartPole ports is caught.

Slow by nature (every mutant through every level, each divergence replayed); it is the
verifier's own yardstick. One fixture runs it once for the checks below.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from envport.verifiers.selfcheck import (
    Mutant,
    MutantResult,
    apply_mutant,
    level_table,
    load_mutants,
    run_selfcheck,
)

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


@pytest.fixture(scope="module")
def results() -> list[MutantResult]:
    found = run_selfcheck(CARTPOLE)
    for r in found:
        print(f"{r.id:32} levels={','.join(r.levels_catching) or '-':16} replay={r.replay_matches}")
    print(level_table(found))
    return found


@pytest.mark.slow
def test_every_behaviour_changing_mutant_is_caught_and_replays(
    results: list[MutantResult],
) -> None:
    not_ok = {r.id: (r.levels_catching, r.replay_matches, r.error) for r in results if not r.ok}
    assert not not_ok, f"mutants not handled correctly: {not_ok}"
    for r in results:
        if not r.equivalent:
            assert r.first is not None and r.first.replay.startswith("envport verify")
            assert r.replay_matches is True, r.id


@pytest.mark.slow
def test_equivalent_mutants_pass_every_level(results: list[MutantResult]) -> None:
    equivalent = [r for r in results if r.equivalent]
    assert equivalent, "the equivalence claim itself must be exercised"
    for r in equivalent:
        assert r.levels_catching == [], r.id


@pytest.mark.slow
def test_l1_or_l2_catch_nine_tenths_of_what_l3_catches(results: list[MutantResult]) -> None:
    by_l3 = [r for r in results if not r.equivalent and "l3" in r.levels_catching]
    early = [r for r in by_l3 if {"load", "l1", "l2"} & set(r.levels_catching)]
    assert len(early) >= 0.9 * len(by_l3), [r.id for r in by_l3 if r not in early]


@pytest.mark.slow
def test_rare_state_bug_is_caught_by_l1_and_missed_by_l3(results: list[MutantResult]) -> None:
    rare = next(r for r in results if r.id == "jax-rare-edge-force")
    assert "l1" in rare.levels_catching
    # The same 100 random-action episodes every other mutant is held to miss it.
    assert "l3" not in rare.levels_catching


@pytest.mark.slow
def test_batch_leak_is_caught_by_l1s_batch_and_by_l2(results: list[MutantResult]) -> None:
    # L1 sends all of a check's examples as one batch, so a leak between envs shows there.
    leak = next(r for r in results if r.id == "numpy-batch-leak")
    assert {"l1", "l2"} <= set(leak.levels_catching)
    assert leak.first is not None and leak.first.level == "l1"
