"""Chess's 4672 actions named as moves, for `[game] moves`: a divergence in the legal-action
mask reads `legal_action_mask[877 e2e4]`.

An action is (file * 8 + rank) * 73 + plane in the mover's frame (black's board mirrored):
planes 0-55 move like a queen, 56-63 like a knight, 64-72 underpromote. The table is built
from PettingZoo's own encoder (`chess_utils.get_move_plane`) over every geometric move, so
the names follow the reference's encoding; a queen-plane move onto the last rank is a pawn's
promotion to a queen only if a pawn stands there, which an action alone does not say.
"""

from __future__ import annotations

from functools import cache

import chess
from pettingzoo.classic.chess import chess_utils

PLANES = 73
UNDERPROMOTIONS = (chess.KNIGHT, chess.BISHOP, chess.ROOK)


def _geometric(source: int, target: int) -> bool:
    files = abs(chess.square_file(target) - chess.square_file(source))
    ranks = abs(chess.square_rank(target) - chess.square_rank(source))
    return files == 0 or ranks == 0 or files == ranks or {files, ranks} == {1, 2}


@cache
def _table() -> dict[int, chess.Move]:
    """Every action a move can have, in white's frame."""
    table: dict[int, chess.Move] = {}
    for source in chess.SQUARES:
        file, rank = chess.square_file(source), chess.square_rank(source)
        for target in chess.SQUARES:
            if target == source or not _geometric(source, target):
                continue
            moves = [chess.Move(source, target)]
            one_forward = rank == 6 and chess.square_rank(target) == 7
            if one_forward and abs(chess.square_file(target) - file) <= 1:
                moves += [chess.Move(source, target, piece) for piece in UNDERPROMOTIONS]
            for move in moves:
                action = (file * 8 + rank) * PLANES + chess_utils.get_move_plane(move)
                table.setdefault(action, move)
    return table


def name(action: int, player: int) -> str:
    """The move `action` is for `player` (0 white, 1 black) in absolute squares (`e7e5`),
    or `?` for an action no move has (a plane leading off the board)."""
    move = _table().get(int(action))
    if move is None:
        return "?"
    if player:
        move = chess_utils.mirror_move(move)
    return move.uci()
