"""PettingZoo chess_v6's observation planes over a batch (`chess_utils.get_observation` and
`raw_env.observe`), in absolute squares; no function modifies its inputs.

Exports:
    history_board(boards int8[B, 64], ep int[B], repeated bool[B]) -> bool[B, 8, 8, 13]
        the 13 planes PettingZoo pushes onto `board_history` after a move
        (`get_observation(board, 0)[:, :, 7:]`): white's six piece planes, black's six, the
        repetition plane; a pawn that just moved two squares drawn on its own back rank.
    observe(players int[B], castling int8[B, 4], halfmove int[B], history bool[B, 8, 8, 104])
        -> bool[B, 8, 8, 111]: the view of each player (`observe(agent)["observation"]`).

Hand-written known-good port, not model output.
"""

import numpy as np

# observe() swaps each of the 8 history boards' own six planes with the opponent's six.
SWAPPED = np.arange(111)
for _board in range(8):
    _own = 7 + 13 * _board
    SWAPPED[_own : _own + 6], SWAPPED[_own + 6 : _own + 12] = (
        np.arange(_own + 6, _own + 12),
        np.arange(_own, _own + 6),
    )


def _grid(planes: np.ndarray) -> np.ndarray:
    """[B, 64, C] by square to PettingZoo's [B, 8, 8, C]: row 0 is the eighth rank."""
    return planes.reshape(len(planes), 8, 8, -1)[:, ::-1]


def history_board(boards, ep, repeated) -> np.ndarray:
    boards = np.asarray(boards)
    ep = np.asarray(ep, dtype=np.int64)
    planes = boards[:, :, None] == np.arange(1, 13)[None, None, :]
    # LeelaChessZero's en passant flag as PettingZoo draws it: the pawn that just moved two
    # squares is shown on its own back rank instead (`if square:` — a1 is never one).
    for lifted, pawn_from, back_rank, plane in ((ep < 32, 8, 0, 0), (ep >= 32, -8, 56, 6)):
        rows = np.flatnonzero((ep > 0) & lifted)
        planes[rows, ep[rows] + pawn_from, plane] = False
        planes[rows, back_rank + ep[rows] % 8, plane] = True
    repetition = np.broadcast_to(np.asarray(repeated)[:, None, None], (len(boards), 64, 1))
    return np.ascontiguousarray(_grid(np.concatenate([planes, repetition], axis=2)))


def observe(players, castling, halfmove, history) -> np.ndarray:
    players = np.asarray(players)
    castling = np.asarray(castling).astype(bool)
    size = len(players)
    black = players == 1
    # get_observation mirrors the board for player_1: its castling planes read black's
    # rights first.
    rights = np.where(black[:, None], castling[:, [2, 3, 0, 1]], castling)
    aux = np.zeros((size, 64, 7), dtype=bool)
    aux[:, :, 0:4] = rights[:, None, :]
    aux[:, :, 4] = black[:, None]
    clock = np.asarray(halfmove, dtype=np.int64) // 2
    rows = np.flatnonzero(clock < 64)
    aux[rows, clock[rows], 5] = True
    aux[:, :, 6] = True
    view = np.concatenate([_grid(aux), np.asarray(history, dtype=bool)], axis=3)
    # observe() flips player_1's whole view upside down and swaps the history's colours.
    view[black] = view[black][:, ::-1][:, :, :, SWAPPED]
    return view
