"""pgx's chess action ids as PettingZoo's: one permutation of the 4672 ids.

Both number an action `source * 73 + plane`, the source square `file * 8 + rank` in the
mover's frame (black's ranks flipped), so only the 73 planes are ordered differently: pgx
puts its 9 underpromotions first (rook, bishop, knight x up, right, left) and then 64
queen and knight moves in its own direction order; PettingZoo has 56 queen moves
(`(distance - 1) * 8 + direction`), 8 knight jumps, then 9 underpromotions
(`3 * (file step + 1) + {knight, bishop, rook}`). Each pgx id whose move exists on the board
(pgx's own `FROM_PLANE` table) is paired with the PettingZoo id of the same move; the ids
neither side can play are paired in order, so an illegal action stays illegal.

Exports:
    PGX_OF_PETTINGZOO int32[4672]: pgx's id of each PettingZoo action
    PETTINGZOO_OF_PGX int32[4672]: its inverse
"""

from __future__ import annotations

import numpy as np
from pgx._src.games.chess import FROM_PLANE

ACTIONS = 64 * 73
# PettingZoo's chess_utils order: queen directions and knight jumps as (file step, rank step),
# in the order get_queen_dir and get_knight_dir count them.
QUEEN_DIRS = [(x, y) for x in (-1, 0, 1) for y in (-1, 0, 1) if (x, y) != (0, 0)]
KNIGHT_DIRS = [(x, y) for x in range(-2, 3) for y in range(-2, 3) if abs(x) + abs(y) == 3]
# pgx's underpromotion planes name the piece by plane // 3; PettingZoo's by this offset.
PGX_UNDERPROMOTION = ("rook", "bishop", "knight")
PETTINGZOO_UNDERPROMOTION = {"knight": 0, "bishop": 1, "rook": 2}


def _pettingzoo_plane(file_step: int, rank_step: int, underpromotion: str | None) -> int:
    if (file_step, rank_step) in KNIGHT_DIRS:
        return 56 + KNIGHT_DIRS.index((file_step, rank_step))
    if underpromotion is not None:
        return 64 + 3 * (file_step + 1) + PETTINGZOO_UNDERPROMOTION[underpromotion]
    distance = max(abs(file_step), abs(rank_step))
    direction = QUEEN_DIRS.index((np.sign(file_step), np.sign(rank_step)))
    return (distance - 1) * 8 + direction


def _permutation() -> np.ndarray:
    targets = np.asarray(FROM_PLANE)
    pettingzoo_of_pgx = -np.ones(ACTIONS, dtype=np.int32)
    for source in range(64):
        for plane in range(73):
            target = int(targets[source, plane])
            if target < 0:
                continue
            file_step = target // 8 - source // 8
            rank_step = target % 8 - source % 8
            under = PGX_UNDERPROMOTION[plane // 3] if plane < 9 else None
            pz_plane = _pettingzoo_plane(file_step, rank_step, under)
            pettingzoo_of_pgx[source * 73 + plane] = source * 73 + pz_plane
    paired = pettingzoo_of_pgx[pettingzoo_of_pgx >= 0]
    if len(set(paired.tolist())) != len(paired):
        raise AssertionError("two pgx actions map to one PettingZoo action")
    # The ids no move fills, on both sides, paired in order: illegal to illegal.
    spare_pettingzoo = np.setdiff1d(np.arange(ACTIONS), paired)
    pettingzoo_of_pgx[pettingzoo_of_pgx < 0] = spare_pettingzoo
    return pettingzoo_of_pgx


PETTINGZOO_OF_PGX = _permutation()
PGX_OF_PETTINGZOO = np.argsort(PETTINGZOO_OF_PGX).astype(np.int32)
