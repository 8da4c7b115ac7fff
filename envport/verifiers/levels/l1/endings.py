"""L1 endings: every move from positions a few moves before a game ends (two-player games).

A game's rules live where it ends: the win along each line, the full board, the illegal
move. Drawn positions seldom hold a move that completes a line (and a drawn position
already holding one is unreachable, so `state.valid` leaves it out), so a port missing the
win along one diagonal passes most draws. Here the reference plays games itself (its
`legal`, one-ply `greedy` and `patient` players), and from each of the last
`ENDING_PLIES` positions before every game's end the port is given every action, legal or
not; each row is compared as L1's transition check compares its examples. Every winning,
blocking, drawing and illegal move of those positions is tried, whichever line it
completes. Deterministic in --seed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from envport.targets.reference import Reference, State, Transition
from envport.verifiers.draws.turns import game_players, turn_actions
from envport.verifiers.levels.l1.examples import L1Run, rows_check
from envport.verifiers.levels.l1.rows import judge_rows
from envport.verifiers.reporting.divergence import LevelResult

# Positions kept before each game's end (the games: `levels.l1.endings`, default 36).
ENDING_PLIES = 4
# Up to this many actions, every one is tried from each position; a game of more (chess's
# 4672) has its legal moves tried and ILLEGAL_TRIED of the others.
EVERY_ACTION = 64
ILLEGAL_TRIED = 4
# Apart from every other stream of a run.
_SALT = 0xE4D5


@dataclass
class Row:
    before: State
    action: int
    transition: Transition


def applies(run: L1Run) -> bool:
    return run.spec.game is not None and run.spec.levels.l1.endings > 0


def _positions(
    reference: Reference, players: tuple[str, ...], seed: int, steps: int, games: int
) -> list[State]:
    """The last positions before the end of each of `games` games the reference plays (its
    players game by game, envport.verifiers.draws.turns)."""
    kept = []
    for game in range(games):
        reference.reset(seed)
        kind = players[game % len(players)]
        played: list[State] = []
        for action in turn_actions(kind, reference, seed ^ _SALT, game, steps):
            played.append(reference.read_state())
            outcome = reference.step(action)
            if outcome.terminated or outcome.truncated:
                break
        kept += played[-ENDING_PLIES:]
    return kept


def _tried(reference: Reference, actions: int, rng: np.random.Generator) -> list[int]:
    """The actions tried from the reference's position: all, or the legal ones and a few
    others (the illegal-move rule is one rule, whichever move breaks it)."""
    if actions <= EVERY_ACTION:
        return list(range(actions))
    legal = reference.legal_actions() or []
    others = np.setdiff1d(np.arange(actions), legal)
    illegal = rng.choice(others, size=min(ILLEGAL_TRIED, len(others)), replace=False)
    return [*legal, *(int(a) for a in illegal)]


def build_rows(run: L1Run) -> list[Row]:
    reference = run.reference
    assert run.spec.game is not None
    players = game_players(run.spec.l3_policies)
    rng = np.random.default_rng([run.seed, _SALT])
    rows = []
    levels = run.spec.levels
    for before in _positions(reference, players, run.seed, levels.l3.steps, levels.l1.endings):
        reference.write_state(before)
        for action in _tried(reference, run.spec.game.actions, rng):
            reference.write_state(before)
            rows.append(Row(before, action, reference.step(action)))
    return rows


def check_endings(run: L1Run, entry: str) -> LevelResult:
    return rows_check(
        run,
        entry,
        "endings",
        lambda: build_rows(run),
        lambda level, rows: judge_rows(
            run,
            entry,
            level,
            rows,
            "endings",
            f"a move from a position {ENDING_PLIES} moves or fewer before the end of a game "
            "the reference played",
        ),
    )
