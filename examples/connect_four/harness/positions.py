"""Which drawn positions Connect Four can reach, for the spec's `state.valid` and
`state.derive`.

Players take turns and `player_0` moves first, so a position played on holds as many pieces
of player_0's as of player_1's, or one more, and the mover follows from the counts (player_1
when player_0 has one more). The spec derives both: `alternating` recolours a drawn board's
pieces to those counts, `pieces` counts them for the mover. A port that derives the mover
from the counts (OpenSpiel's does) can hold every drawn position.

A game ends at its first four in a row, so no position played on holds one already.
PettingZoo's `check_for_winner` scans the whole board for the mover's four, so on such a
board any move would "win"; a port that tests only the lines through the piece just played
(as fast ports do) is right in every game and would differ there. Those boards are left out.
"""

from __future__ import annotations

from typing import Any

import numpy as np

ROWS, COLUMNS = 6, 7
# (row step, column step) of the four directions a line can run.
DIRECTIONS = ((0, 1), (1, 0), (1, 1), (1, -1))


def grid(board: Any) -> np.ndarray:
    """The seven bottom-up columns (`board.c0` .. `board.c6`) as rows x columns, row 0 on top."""
    cells = np.zeros((ROWS, COLUMNS), dtype=np.int64)
    for column in range(COLUMNS):
        pieces = np.asarray(getattr(board, f"c{column}")).reshape(-1)
        for height, piece in enumerate(pieces):
            cells[ROWS - 1 - height, column] = piece
    return cells


def four_in_a_row(board: Any) -> bool:
    """Whether either player already has four in a row on the board."""
    cells = grid(board)
    for row in range(ROWS):
        for column in range(COLUMNS):
            piece = cells[row, column]
            if piece == 0:
                continue
            for dr, dc in DIRECTIONS:
                end_r, end_c = row + 3 * dr, column + 3 * dc
                if not (0 <= end_r < ROWS and 0 <= end_c < COLUMNS):
                    continue
                if all(cells[row + k * dr, column + k * dc] == piece for k in range(4)):
                    return True
    return False


def pieces(board: Any, piece: int) -> int:
    """How many of `piece` the board holds."""
    return int(np.count_nonzero(grid(board) == piece))


def alternating(board: Any, column: int) -> list[int]:
    """Column `column`'s pieces, recoloured so that the board holds as many of player_0's
    as of player_1's, or one more: of the colour in excess, the last pieces in reading order
    (column 0 bottom up, then column 1, ...) change. Only a suffix of that order changes,
    so deriving the columns one after another, each from the board the ones before it left,
    gives the board recoloured at once."""
    columns = [
        [int(p) for p in np.asarray(getattr(board, f"c{c}")).reshape(-1)] for c in range(COLUMNS)
    ]
    total = sum(len(pieces) for pieces in columns)
    ones = sum(p == 1 for pieces in columns for p in pieces)
    excess, colour, other = ones - (total + 1) // 2, 1, 2
    if excess < 0:
        excess, colour, other = -excess, 2, 1
    cells = [(c, h) for c in range(COLUMNS) for h in range(len(columns[c]))]
    for c, h in reversed(cells):
        if excess == 0:
            break
        if columns[c][h] == colour:
            columns[c][h] = other
            excess -= 1
    return columns[column]
