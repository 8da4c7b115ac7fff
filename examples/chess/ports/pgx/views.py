"""pgx's chess observation laid out as PettingZoo's: planes picked and reordered, no rule added.

pgx's view (8, 8, 119) float32 (`pgx/_src/games/chess.py` `Game.observe`): 8 history
boards x 14 planes (the viewer's pawn..king, the opponent's, "seen no other time", "seen
again"), then its colour, the ply count / 512, castling (viewer queenside, kingside,
opponent queenside, kingside) and the halfmove clock / 100. Rows run from the viewer's
eighth rank down, files a..h, as PettingZoo's player_0 view and its mirrored player_1 view do.

PettingZoo's view (8, 8, 111) bool (`chess_v6` `observe`): castling (viewer kingside,
queenside, opponent kingside, queenside), colour, the clock as one set square at
`halfmove_clock // 2` (white's frame, rows flipped for player_1), all ones, then 8 boards x
13 planes (12 pieces and the repetition flag).

So: pgx's piece planes and "seen again" flag per board, its castling planes reordered, its
colour plane, its clock value as PettingZoo's square, and a plane of ones. pgx's ply-count
plane and "seen no other time" planes have no PettingZoo plane and are dropped; what differs
in content stays: pgx's history holds the start position, where PettingZoo's starts empty;
pgx does not move a just double-pushed pawn to its back rank (PettingZoo's en passant mark);
pgx's repetition flags count later occurrences too.

Exports:
    pettingzoo_view(obs float32[8, 8, 119]) -> bool[8, 8, 111]
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

# pgx channel of each PettingZoo history plane: pieces 0..11, then "seen again" (13).
HISTORY = np.asarray([14 * board + k for board in range(8) for k in (*range(12), 13)])
COLOUR, CLOCK = 112, 118
CASTLING = np.asarray([115, 114, 117, 116])  # viewer O-O, O-O-O, opponent O-O, O-O-O
ROW = np.arange(8)[:, None]
FILE = np.arange(8)[None, :]


def pettingzoo_view(obs: jax.Array) -> jax.Array:
    corner = obs[0, 0]
    black = corner[COLOUR] > 0.5
    clock = jnp.round(corner[CLOCK] * 100.0).astype(jnp.int32)
    square = clock // 2
    # The clock square is set on white's board (rank 8 the top row); player_1's view flips it.
    row = jnp.where(black, square // 8, 7 - square // 8)
    clock_plane = (row == ROW) & (square % 8 == FILE) & (square < 64)
    ones = jnp.ones((8, 8), jnp.bool_)
    aux = [ones & (corner[c] > 0.5) for c in CASTLING]
    aux += [ones & black, clock_plane, ones]
    return jnp.concatenate([jnp.stack(aux, axis=-1), obs[..., HISTORY] > 0.5], axis=-1)
