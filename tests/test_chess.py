"""PettingZoo's chess_v6 through envport's verifier (examples/chess).

L1 draws its start positions from games the reference plays (`[state.reached]`): the
known-good NumPy port passes every probe, the transition and the endings; a port that lets
a pinned piece move, and one that hands the turn to the opponent after an illegal move, fail
L1. The reference is slow (a few milliseconds a step), so the budgets are cut; `envport
verify examples/chess --port examples/chess/ports/numpy` runs the spec's own.

Rarer rules (en passant, castling through an attacked square, an en passant capture that
uncovers a check) seldom come up in the few positions L1 draws: L1's `reached` check puts
the port through every step the reference took for `[state.reached]` (whole random games
and every two-move line from the spec's book of positions), and names the rule that
differs. Those steps are played once per process, so the tests below share them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from envport.verifiers.options import VerifyOptions
from envport.verifiers.selfcheck import apply_mutant, load_mutants
from envport.verifiers.verify import verify

from helpers import ROOT

CHESS = ROOT / "examples" / "chess"
CAUGHT_AT_L1 = ("numpy-pinned-piece-moves", "numpy-illegal-turn-to-opponent")


L1 = VerifyOptions(target="numpy", levels=("l1",), examples=20, shrink=False)
# The whole transition's checks alone (the entry module's), a few drawn examples: the
# `reached` check's rows are the point.
REACHED = VerifyOptions(target="numpy", levels=("l1",), examples=3, shrink=False, module="env")
# Each mutant `reached` catches, and what its divergence names first: the mask entry of the
# move the rule allows or forbids, the castling plane, the game's end.
CAUGHT_BY_REACHED = {
    "numpy-en-passant-missed": "legal_action_mask[",
    "numpy-castles-through-attacked-square": "legal_action_mask[",
    "numpy-en-passant-exposes-king": "legal_action_mask[",
    # The book's position where every quiet move at 99 halfmoves stalemates the opponent.
    "numpy-fifty-claim-without-reply": "terminated",
}


@pytest.mark.slow
def test_the_known_good_numpy_port_passes_l1() -> None:
    port = CHESS / "ports" / "numpy"
    report = verify(str(CHESS), str(port), L1)
    assert report.passed, report.text()
    modes = {level.mode for level in report.levels}
    assert {"transition", "endings", "rules.legal_action_mask", "rules.play"} <= modes
    endings = next(level for level in report.levels if level.mode == "endings")
    assert endings.steps_compared > 100


@pytest.mark.slow
@pytest.mark.parametrize("mutant_id", CAUGHT_AT_L1)
def test_a_rule_slip_fails_l1(mutant_id: str, tmp_path: Path) -> None:
    (mutant,) = [m for m in load_mutants(CHESS) if m.id == mutant_id]
    port = apply_mutant(mutant, CHESS / "ports" / "numpy", tmp_path / mutant.id)
    report = verify(str(CHESS), str(port), L1)
    assert report.error is None and not report.passed, report.text()
    fields = [d.field for level in report.levels for v in level.divergences for d in v.fields]
    # Named by what differs: a mask entry, a square, the player to move.
    assert any(
        f.startswith(("mask[", "legal_action_mask[", "board[", "current_player")) for f in fields
    ), fields


@pytest.mark.slow
def test_the_known_good_numpy_port_passes_every_reached_step() -> None:
    report = verify(str(CHESS), str(CHESS / "ports" / "numpy"), REACHED)
    assert report.passed, report.text()
    (reached,) = [level for level in report.levels if level.mode == "reached"]
    assert reached.steps_compared > 5000


@pytest.mark.slow
@pytest.mark.parametrize("mutant_id", sorted(CAUGHT_BY_REACHED))
def test_a_rare_rule_slip_fails_the_reached_check(mutant_id: str, tmp_path: Path) -> None:
    (mutant,) = [m for m in load_mutants(CHESS) if m.id == mutant_id]
    port = apply_mutant(mutant, CHESS / "ports" / "numpy", tmp_path / mutant.id)
    report = verify(str(CHESS), str(port), REACHED)
    assert report.error is None and not report.passed, report.text()
    (reached,) = [level for level in report.levels if level.mode == "reached"]
    assert not reached.passed, report.text()
    (divergence,) = reached.divergences
    assert divergence.fields[0].field.startswith(CAUGHT_BY_REACHED[mutant_id]), divergence.fields


@pytest.mark.slow
def test_a_record_kept_across_irreversible_moves_fails_l2(tmp_path: Path) -> None:
    """A repetition record never emptied after a pawn move or capture changes no count
    before it overflows, so no output shows it; L2's sequences play legal moves and read
    the state after each, where the longer record shows (as l1.transition's state after a
    step does, at its default budget)."""
    (mutant,) = [m for m in load_mutants(CHESS) if m.id == "numpy-record-never-restarts"]
    port = apply_mutant(mutant, CHESS / "ports" / "numpy", tmp_path / mutant.id)
    options = VerifyOptions(target="numpy", levels=("l2",), shrink=False)
    report = verify(str(CHESS), str(port), options)
    assert report.error is None and not report.passed, report.text()
    (interaction,) = [level for level in report.levels if level.mode == "interaction"]
    fields = [d.field for v in interaction.divergences for d in v.fields]
    assert fields and fields[0].startswith("state.positions"), fields
