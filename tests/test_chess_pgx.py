"""pgx's own chess verified against PettingZoo's chess_v6 through its bridge
(examples/chess/ports/pgx): README's verdict, the rules the bridge says pgx shares, and the
ones it plays differently.

`envport verify examples/chess --port examples/chess/ports/pgx --target jax` runs the full
budgets; these tests run smaller ones.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType

import numpy as np
import pytest

from envport.verifiers.verify import VerifyOptions, verify

from helpers import ROOT, chess_leaves, divergent_fields, quiet_pettingzoo

pytest.importorskip("pgx")
pytestmark = pytest.mark.slow

CHESS = ROOT / "examples" / "chess"
BRIDGE = CHESS / "ports" / "pgx"
# The leaves pgx holds as the reference does (board_history differs: see the bridge's views).
SHARED = ("board", "current_player", "castling", "ep_square", "halfmove_clock", "positions")


def _bridge() -> ModuleType:
    """The bridge's env module, its directory loaded as a package of its own name."""
    package = ModuleType("pgx_chess_bridge")
    package.__path__ = [str(BRIDGE)]
    sys.modules[package.__name__] = package
    return importlib.import_module(f"{package.__name__}.env")


def _pettingzoo() -> object:
    from pettingzoo.classic import chess_v6

    env = chess_v6.env()
    env.reset()
    return env


def test_pgx_chess_diverges_on_the_illegal_move_rule() -> None:
    """A cut L1: from the drawn positions an illegal move is met first: pgx plays it, gives
    the opponent +1, does not truncate and hands the turn on (PettingZoo: 0, truncated,
    player_0 to move); the finished game's mask is all True."""
    options = VerifyOptions(target="jax", levels=("l1",), examples=20)
    report = verify(str(CHESS), str(BRIDGE), options)
    assert not report.passed and report.error is None
    fields = divergent_fields(report)
    assert {"rewards[player_0]", "rewards[player_1]"} & fields, fields
    assert "truncated" in fields, fields
    assert any(f.startswith("legal_action_mask[") for f in fields), fields


def test_pgx_chess_moves_as_pettingzoo_along_a_played_game() -> None:
    """From each position of a random game (loaded from the reference's state), pgx's
    legal moves are PettingZoo's, and one move later its board, castling rights, en passant
    square, clock and the repetition record read as the reference's."""
    import jax

    bridge = _bridge()
    load = jax.jit(bridge.state_from_reference)
    step = jax.jit(bridge.step)
    read = jax.jit(bridge.state_to_reference)
    env = _pettingzoo()
    rng = np.random.default_rng(7)
    key = jax.random.PRNGKey(0)
    with quiet_pettingzoo():
        for ply in range(80):
            state = load(chess_leaves(env))
            mask = env.observe(env.agent_selection)["action_mask"].astype(bool)
            np.testing.assert_array_equal(np.asarray(state.legal_action_mask), mask, str(ply))
            action = int(rng.choice(np.flatnonzero(mask)))
            moved = read(step(state, action, key))
            env.step(action)
            expected = chess_leaves(env)
            for name in SHARED:
                np.testing.assert_array_equal(
                    np.asarray(moved[name]), expected[name], f"{name} at ply {ply}"
                )
            if any(env.terminations.values()):
                break


def _action(uci: str) -> int:
    """PettingZoo's action of a move written in the mover's frame (black's mirrored)."""
    import chess
    from pettingzoo.classic.chess import chess_utils

    move = chess.Move.from_uci(uci)
    file, rank = chess_utils.square_to_coord(move.from_square)
    return (file * 8 + rank) * 73 + chess_utils.get_move_plane(move)


@pytest.mark.parametrize(
    ("opening", "ends"),
    [
        # python-chess's claim looks one move ahead: PettingZoo ends the game when black
        # can repeat a position a third time, pgx on the third occurrence itself.
        (("e2e3", "e2e3"), (9, 10)),
        # pgx hashes the position after a double push with its en passant square (not
        # capturable here), so that position's first occurrence does not count.
        (("e2e4", "e2e4"), (9, 11)),
        # pgx's stored hash of the start position (INIT_ZOBRIST_HASH) is not the one its
        # Zobrist tables (drawn by jax.random at import) give it under the installed jax:
        # the start position's first occurrence does not count.
        ((), (7, 9)),
    ],
)
def test_pgx_chess_ends_a_repetition_later_than_pettingzoo(
    opening: tuple[str, ...], ends: tuple[int, int]
) -> None:
    """Knights out and back (g1-f3 and back, black's mirrored) after an opening: the ply at
    which each ends the game, drawn (0, 0) in pgx."""
    import jax

    bridge = _bridge()
    step = jax.jit(bridge.step)
    state = bridge.init(jax.random.PRNGKey(1))
    env = _pettingzoo()
    plies = [_action(uci) for uci in (*opening, *("g1f3", "g1f3", "f3g1", "f3g1") * 3)]
    ended_pettingzoo = ended_pgx = None
    for ply, action in enumerate(plies, start=1):
        state = step(state, action, jax.random.PRNGKey(0))
        if ended_pettingzoo is None:
            env.step(action)
            if any(env.terminations.values()):
                ended_pettingzoo = ply
        if ended_pgx is None and bool(state.terminated):
            ended_pgx = ply
            assert np.asarray(state.rewards).tolist() == [0.0, 0.0]
    assert (ended_pettingzoo, ended_pgx) == ends
