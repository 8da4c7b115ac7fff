"""Start positions where chess's rarer rules decide, for `[state.reached] book`.

Random play reaches some rules almost never (an en passant capture that would leave the
king on an open rank: in none of 34,000 positions of random games), so the spec names a
book: envport plays every legal move from each of these positions, and every reply to each
(`depth = 2`), and the port is put through every one of those steps (L1's `reached`).

- The perft suite (chessprogramming.org/Perft_Results), on which move generators are
  tested: Kiwipete (castling through and out of attacked squares, en passant, promotions),
  position 3 (an en passant capture that uncovers a rook's check along the fifth rank,
  promotions to every piece), position 4 and its mirror (castling rights lost to a
  captured rook, underpromotion with capture), position 5.
- Draw rules at their edge: the halfmove clock at 98 with quiet moves and pawn moves
  to hand (the fifty-move claim one move away), and one where after Ka1 every quiet move
  of black's stalemates white (python-chess's look-ahead wants a legal reply: no claim);
  a stalemate one move away; a king with two knights against a bare king
  (not insufficient material: python-chess lets one knight alone count as such).

Each position starts with PettingZoo's empty history (as after its reset) and no earlier
positions.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import chess
import numpy as np

from envport.targets.turns import fresh_turn

POSITIONS = (
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 b - - 0 1",
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    "r2q1rk1/pP1p2pp/Q4n2/bbp1p3/Np6/1B3NBn/pPPP1PPP/R3K2R b KQ - 0 1",
    "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
    "8/8/4k3/8/2p5/8/1P2K3/4R3 w - - 98 80",
    "8/8/8/8/8/p1k5/P1p5/1K6 w - - 98 80",
    "7k/8/6Q1/8/8/8/8/K7 w - - 40 60",
    "8/8/8/3k4/8/8/2NN4/4K3 w - - 10 50",
)


def positions(env: Any) -> Iterator[None]:
    """Put the reference into each position in turn: its board, PettingZoo's empty history,
    the turn to the side to move."""
    for fen in POSITIONS:
        board = chess.Board(fen)
        # A position no game reaches (the side not to move in check) is a false alarm.
        if not board.is_valid():
            raise ValueError(f"the book's position {fen} is not one a game reaches")
        game = env.unwrapped
        game.board = board
        game.board_history = np.zeros((8, 8, 104), dtype=bool)
        fresh_turn(env, 0 if game.board.turn == chess.WHITE else 1)
        yield
