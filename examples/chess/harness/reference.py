"""The state bridge of PettingZoo's chess (chess_v6.env()), for envport.

The game's state is a python-chess `Board` (pieces, side to move, castling rights, the en
passant square, the halfmove clock, and its move stack, which repetition claims walk back
over) and PettingZoo's `board_history` (the last eight positions' planes, from which every
observation is built). The bridge presents them as flat leaves:

- `board`: 64 squares in python-chess order (a1, b1, ..., h8): 0 empty, 1..6 a white pawn,
  knight, bishop, rook, queen, king, 7..12 the black ones;
- `current_player`: 0 (player_0, white) or 1 (player_1, black), whose turn it is;
- `castling`: white kingside, white queenside, black kingside, black queenside (python-chess's
  clean castling rights), 0 or 1 each;
- `ep_square`: python-chess's `ep_square` (set after every double pawn push), -1 for none;
- `halfmove_clock`;
- `board_history`: PettingZoo's array, 0 or 1, [8, 8, 104];
- `positions` (a list of up to 100 records, with `positions.length`): the earlier positions
  that count for repetition, oldest first: those from which a reversible move was played,
  back to the last irreversible one (python-chess's `is_irreversible`). Each record is a
  position's transposition key: its 64 squares, a castling mask (1 white kingside, 2 white
  queenside, 4 black kingside, 8 black queenside), the en passant square when a legal
  capture there exists (else -1), and the side to move (0 white, 1 black).

Writing a state builds the board and, for the positions, a move stack python-chess walks
back (and forward again) exactly as it would the game's own: each position restored from
its key, each move the one piece that went from one position to the next (reversible
moves take no piece and move no pawn). It also clears
what a finished game leaves behind (terminations, rewards, the illegal-move wrapper's flag),
so any state can be played on from the start of a turn.
"""

from __future__ import annotations

from typing import Any

import chess
import numpy as np

from envport.targets.turns import fresh_turn

CAPACITY = 100
CASTLING_SQUARES = (chess.BB_H1, chess.BB_A1, chess.BB_H8, chess.BB_A8)


def _code(piece: chess.Piece | None) -> int:
    if piece is None:
        return 0
    return piece.piece_type + (0 if piece.color == chess.WHITE else 6)


def _piece(code: int) -> chess.Piece | None:
    if code == 0:
        return None
    return chess.Piece((code - 1) % 6 + 1, chess.WHITE if code <= 6 else chess.BLACK)


def _castling_bits(rights: int) -> list[int]:
    return [int(bool(rights & square)) for square in CASTLING_SQUARES]


def _rights(bits: Any) -> int:
    return sum(square for bit, square in zip(bits, CASTLING_SQUARES, strict=True) if bit)


def _key(board: chess.Board) -> list[int]:
    """A position's transposition key, as python-chess compares positions for repetition."""
    squares = [_code(board.piece_at(square)) for square in chess.SQUARES]
    castling = sum(bit << i for i, bit in enumerate(_castling_bits(board.clean_castling_rights())))
    legal = board.ep_square is not None and board.has_legal_en_passant()
    legal_ep = board.ep_square if legal else -1
    return [*squares, castling, legal_ep, 0 if board.turn == chess.WHITE else 1]


def _position(
    squares: Any, turn: int, rights: int, ep_square: int, halfmove_clock: int
) -> chess.Board:
    board = chess.Board(None)
    for square, code in enumerate(squares):
        piece = _piece(int(code))
        if piece is not None:
            board.set_piece_at(square, piece)
    board.turn = chess.WHITE if turn == 0 else chess.BLACK
    board.castling_rights = rights
    board.ep_square = None if ep_square < 0 else int(ep_square)
    board.halfmove_clock = int(halfmove_clock)
    return board


def _move_between(before: list[int], after: list[int]) -> chess.Move:
    """The reversible move (one piece to an empty square) leading from one position to the
    next; a state whose positions are not such moves is refused."""
    left = [sq for sq in chess.SQUARES if before[sq] != 0 and after[sq] == 0]
    entered = [sq for sq in chess.SQUARES if before[sq] == 0 and after[sq] != 0]
    changed = [sq for sq in chess.SQUARES if before[sq] != after[sq]]
    if len(left) != 1 or len(entered) != 1 or len(changed) != 2:
        raise ValueError("`positions` must follow each other by one reversible move each")
    return chess.Move(left[0], entered[0])


def _repetition_positions(board: chess.Board) -> list[list[int]]:
    """The positions python-chess's repetition checks walk back over, oldest first."""
    walked = board.copy()
    found = []
    while walked.move_stack:
        move = walked.pop()
        if walked.is_irreversible(move):
            break
        found.append(_key(walked))
    return found[::-1][-CAPACITY:]


def read_state(env: Any) -> dict[str, Any]:
    game = env.unwrapped
    board = game.board
    return {
        "board": [_code(board.piece_at(square)) for square in chess.SQUARES],
        "current_player": game.possible_agents.index(game.agent_selection),
        "castling": _castling_bits(board.clean_castling_rights()),
        "ep_square": -1 if board.ep_square is None else int(board.ep_square),
        "halfmove_clock": int(board.halfmove_clock),
        "board_history": np.asarray(game.board_history, dtype=np.int64),
        "positions": _repetition_positions(board),
    }


def write_state(env: Any, state: dict[str, Any]) -> None:
    game = env.unwrapped
    player = int(state["current_player"])
    clock = int(state["halfmove_clock"])
    board = _position(
        state["board"], player, _rights(state["castling"]), int(state["ep_square"]), clock
    )
    # The repetition positions as a stack python-chess pops back through (and pushes again:
    # each move is the one between two positions, so the walk restores what it undid).
    rows = [[int(v) for v in row] for row in state["positions"]]
    keys = [*rows, _key(board)]
    for index, row in enumerate(rows):
        rights = _rights([(row[64] >> i) & 1 for i in range(4)])
        earlier_clock = max(0, clock - (len(rows) - index))
        earlier = _position(row[:64], row[66], rights, row[65], earlier_clock)
        board._stack.append(chess._BoardState(earlier))
        board.move_stack.append(_move_between(keys[index], keys[index + 1]))
    game.board = board
    game.board_history = np.asarray(state["board_history"], dtype=bool).reshape(8, 8, 104)
    fresh_turn(env, player)
