"""Which drawn positions Connect Four can reach, for the spec's `state.valid`.

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
