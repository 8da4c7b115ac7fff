"""Connect Four's rules on one board (PettingZoo 1.27 `connect_four_v3`), jax-traceable.

The board is int8[6, 7] in PettingZoo's layout: row 0 at the TOP, 0 empty, 1 player_0's
piece, 2 player_1's. Every function works on one board with static shapes (vmap it for a
batch), branches with `jnp.where`, never `lax.cond`, and indexes by a traced value only
through one-hot masks: under vmap a dynamic index is a gather, which costs more than the
42 selects of a mask on the CPU.

Exports:
    ROWS = 6, COLUMNS = 7
    legal_moves(board: int8[6, 7]) -> bool[7]
        the columns whose top cell is empty (PettingZoo's `_legal_moves`).
    drop(board: int8[6, 7], column: int32, piece: int8) -> (int8[6, 7], int32)
        the board with `piece` in the lowest empty cell of `column`, and that cell's row;
        a full column leaves the board unchanged and gives row -1.
    has_four(board: int8[6, 7], piece: int8) -> bool
        whether any four-in-a-row of `piece` is on the whole board (horizontal, vertical,
        both diagonals), as PettingZoo's `check_for_winner` scans it.
    is_full(board: int8[6, 7]) -> bool
        every cell taken (PettingZoo's draw test).
    observe(board: int8[6, 7], player: int32) -> int8[6, 7, 2]
        `player`'s view: plane 0 their pieces, plane 1 the opponent's (PettingZoo's
        `observe(agent)["observation"]`).

Hand-written known-good port: a test subject for the verifier, not model output.
"""

import jax
import jax.numpy as jnp

ROWS = 6
COLUMNS = 7
ROW_INDEX = jnp.arange(ROWS, dtype=jnp.int32)[:, None]
COLUMN_INDEX = jnp.arange(COLUMNS, dtype=jnp.int32)[None, :]
COLUMN_BIT = 1 << COLUMN_INDEX


def legal_moves(board: jax.Array) -> jax.Array:
    return board[0] == 0


def drop(board: jax.Array, column: jax.Array, piece: jax.Array) -> tuple[jax.Array, jax.Array]:
    # The lowest empty cell is the empty one of largest row, -1 when the column is full.
    # (PettingZoo scans up from the bottom for the first empty cell: the same cell on any
    # board, gapped columns included.)
    in_column = column == COLUMN_INDEX
    row = jnp.max(jnp.where((board == 0) & in_column, ROW_INDEX, -1))
    # A one-hot write (42 selects), not `.at[row, column].set`, which vmap makes a scatter.
    cell = in_column & (row == ROW_INDEX)
    return jnp.where(cell, jnp.asarray(piece, board.dtype), board), row


def _row_bits(mine: jax.Array) -> jax.Array:
    """bool[6, 7] -> int32[6]: bit c of row r set where (r, c) is marked."""
    return jnp.sum(jnp.where(mine, COLUMN_BIT, 0), axis=1, dtype=jnp.int32)


def has_four(board: jax.Array, piece: jax.Array) -> jax.Array:
    # The 69 windows as shifts and ANDs of six 7-bit rows: bit c of a result is set where
    # a line starts at column c. Cheaper under vmap than ANDs of four shifted [6, 7] views
    # (about twice the steps/s at B=4096), and no gathers.
    bits = _row_bits(board == jnp.asarray(piece, board.dtype))
    horizontal = bits & (bits >> 1) & (bits >> 2) & (bits >> 3)
    vertical = bits[0:3] & bits[1:4] & bits[2:5] & bits[3:6]
    # Down-right from (r, c): (r + k, c + k); up-right from (r + 3, c): (r + 3 - k, c + k).
    down = bits[0:3] & (bits[1:4] >> 1) & (bits[2:5] >> 2) & (bits[3:6] >> 3)
    up = bits[3:6] & (bits[2:5] >> 1) & (bits[1:4] >> 2) & (bits[0:3] >> 3)
    return jnp.any(horizontal != 0) | jnp.any(vertical != 0) | jnp.any(down != 0) | jnp.any(up != 0)


def is_full(board: jax.Array) -> jax.Array:
    return jnp.all(board != 0)


def observe(board: jax.Array, player: jax.Array) -> jax.Array:
    own = (jnp.asarray(player, board.dtype) + 1).astype(board.dtype)
    other = (3 - own).astype(board.dtype)
    return jnp.stack([board == own, board == other], axis=-1).astype(jnp.int8)
