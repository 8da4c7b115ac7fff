"""Connect Four's rules on a batch of boards (PettingZoo 1.27 `connect_four_v3`), vectorised
over the leading axis B; no function modifies its inputs.

A board is int8[6, 7] in PettingZoo's layout: row 0 at the TOP, 0 empty, 1 player_0's
piece, 2 player_1's.

Exports:
    ROWS = 6, COLUMNS = 7
    legal_moves(boards: int8[B, 6, 7]) -> bool[B, 7]
        the columns whose top cell is empty (PettingZoo's `_legal_moves`).
    drop(boards: int8[B, 6, 7], columns: int[B], pieces: int[B]) -> (int8[B, 6, 7], int[B])
        new boards with each piece in the lowest empty cell of its column, and that cell's
        row; a full column leaves its board unchanged and gives row -1.
    has_four(boards: int8[B, 6, 7], pieces: int[B]) -> bool[B]
        whether any four-in-a-row of the piece is on the whole board (horizontal, vertical,
        both diagonals), as PettingZoo's `check_for_winner` scans it.
    is_full(boards: int8[B, 6, 7]) -> bool[B]
        every cell taken (PettingZoo's draw test).
    observe(boards: int8[B, 6, 7], players: int[B]) -> int8[B, 6, 7, 2]
        each player's view: plane 0 their pieces, plane 1 the opponent's (PettingZoo's
        `observe(agent)["observation"]`).

Hand-written known-good port: a test subject for the verifier, not model output.
"""

import numpy as np

ROWS = 6
COLUMNS = 7
ROW_INDEX = np.arange(ROWS)[None, :, None]
COLUMN_INDEX = np.arange(COLUMNS)[None, None, :]


def legal_moves(boards: np.ndarray) -> np.ndarray:
    return np.asarray(boards)[:, 0] == 0


def drop(boards: np.ndarray, columns: np.ndarray, pieces: np.ndarray) -> tuple:
    boards = np.asarray(boards)
    in_column = np.asarray(columns)[:, None, None] == COLUMN_INDEX
    # The lowest empty cell is the empty one of largest row, -1 when the column is full.
    # (PettingZoo scans up from the bottom for the first empty cell: the same cell on any
    # board, gapped columns included.)
    rows = np.where((boards == 0) & in_column, ROW_INDEX, -1).max(axis=(1, 2))
    cells = in_column & (rows[:, None, None] == ROW_INDEX)
    placed = np.asarray(pieces).astype(boards.dtype)[:, None, None]
    return np.where(cells, placed, boards), rows


def _lines(mine: np.ndarray) -> np.ndarray:
    """Whether a four of `mine` (bool[B, 6, 7]) starts anywhere: the 69 windows as ANDs of
    four shifted views of each plane."""
    h = mine[:, :, 0:4] & mine[:, :, 1:5] & mine[:, :, 2:6] & mine[:, :, 3:7]
    v = mine[:, 0:3, :] & mine[:, 1:4, :] & mine[:, 2:5, :] & mine[:, 3:6, :]
    # Down-right from (r, c), and up-right from (r + 3, c).
    d = mine[:, 0:3, 0:4] & mine[:, 1:4, 1:5] & mine[:, 2:5, 2:6] & mine[:, 3:6, 3:7]
    a = mine[:, 3:6, 0:4] & mine[:, 2:5, 1:5] & mine[:, 1:4, 2:6] & mine[:, 0:3, 3:7]
    return h.any(axis=(1, 2)) | v.any(axis=(1, 2)) | d.any(axis=(1, 2)) | a.any(axis=(1, 2))


def has_four(boards: np.ndarray, pieces: np.ndarray) -> np.ndarray:
    return _lines(np.asarray(boards) == np.asarray(pieces)[:, None, None])


def is_full(boards: np.ndarray) -> np.ndarray:
    return (np.asarray(boards) != 0).all(axis=(1, 2))


def observe(boards: np.ndarray, players: np.ndarray) -> np.ndarray:
    boards = np.asarray(boards)
    own = (np.asarray(players) + 1)[:, None, None]
    return np.stack([boards == own, boards == 3 - own], axis=-1).astype(np.int8)
