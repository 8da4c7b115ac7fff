"""The repetition record of the JAX chess port: python-chess's transposition keys packed into
nine uint32 words, and the threefold tests over them.

A key is 8 words of 4-bit square codes (word w holds rank w, file f in bits 4f..4f+3) and a
meta word: castling mask (1 white O-O, 2 white O-O-O, 4 black O-O, 8 black O-O-O), the
en passant square + 1 (0 for none) shifted by 4, the side to move shifted by 11. Keys compare
exactly (no hash collisions), and a square-wise difference of two keys is a few word ops.

Exports:
    KEY_WORDS = 9, MAX_POSITIONS = 100
    pack(board: int8[64], castling: bool[4], ep: int32, side: int32) -> uint32[9]
    unpack(key: uint32[9]) -> int32[67] (the reference's `positions` row)
    from_rows(rows: int[100, 67]) -> uint32[100, 9]
    counts(keys: uint32[100, 9], length: int32) -> int32[100]
        how often each row's key occurs among the first `length` rows.
    reaches(keys, counts, length, current: uint32[9], mask: bool[4672], player: int32) -> bool
        whether a legal move of `player` (to move at `current`) reaches a position that
        occurs twice among the rows: python-chess's look-ahead in
        `can_claim_threefold_repetition`. Only a reversible move can (pawns, captures and
        castling rights never come back), which changes exactly two squares.

Hand-written known-good port, not model output.
"""

import jax
import jax.numpy as jnp

from .rules import ACTION_OF_MOVE, KING

KEY_WORDS = 9
MAX_POSITIONS = 100
NIBBLE = jnp.arange(8, dtype=jnp.uint32) * 4
CASTLE_BITS = jnp.asarray([1, 2, 4, 8], jnp.uint32)
CORNERS = jnp.asarray([7, 0, 63, 56], jnp.int32)  # the rook square of each castling right
WORD = jnp.arange(8, dtype=jnp.int32)


def pack(board, castling, ep, side) -> jax.Array:
    codes = board.reshape(8, 8).astype(jnp.uint32) << NIBBLE
    words = jnp.sum(codes, axis=1, dtype=jnp.uint32)  # disjoint bits: a sum is an OR
    mask = jnp.sum(jnp.where(castling, CASTLE_BITS, 0), dtype=jnp.uint32)
    meta = mask | ((jnp.asarray(ep, jnp.int32) + 1).astype(jnp.uint32) << 4)
    meta = meta | (jnp.asarray(side, jnp.uint32) << 11)
    return jnp.concatenate([words, meta[None]])


def unpack(key) -> jax.Array:
    squares = ((key[:8, None] >> NIBBLE[None, :]) & 0xF).reshape(64).astype(jnp.int32)
    meta = key[8]
    tail = jnp.stack([meta & 0xF, ((meta >> 4) & 0x7F).astype(jnp.int32) - 1, (meta >> 11) & 1])
    return jnp.concatenate([squares, tail.astype(jnp.int32)])


def from_rows(rows) -> jax.Array:
    rows = jnp.asarray(rows, jnp.int32)
    codes = (rows[:, :64].reshape(-1, 8, 8).astype(jnp.uint32)) << NIBBLE
    words = jnp.sum(codes, axis=2, dtype=jnp.uint32)
    meta = rows[:, 64].astype(jnp.uint32) | ((rows[:, 65] + 1).astype(jnp.uint32) << 4)
    meta = meta | (rows[:, 66].astype(jnp.uint32) << 11)
    return jnp.concatenate([words, meta[:, None]], axis=1)


def matches(keys, length, key) -> jax.Array:
    valid = jnp.arange(keys.shape[0]) < length
    return jnp.all(keys == key, axis=-1) & valid


def counts(keys, length) -> jax.Array:
    same = jnp.all(keys[:, None, :] == keys[None, :, :], axis=-1)
    valid = jnp.arange(keys.shape[0]) < length
    return jnp.sum(same & valid[None, :], axis=1, dtype=jnp.int32) * valid


def _occupied(words):
    """A bit at the low end of each non-empty 4-bit square code."""
    return (words | (words >> 1) | (words >> 2) | (words >> 3)) & jnp.uint32(0x11111111)


def _square(bits):
    """The square of the one set nibble-bit among 8 words (per row)."""
    low = jax.lax.population_count(bits - jnp.uint32(1)).astype(jnp.int32) // 4
    return jnp.sum(jnp.where(bits != 0, WORD * 8 + low, 0), axis=-1)


def _code_at(words, square):
    word = jnp.sum(jnp.where(square[:, None] // 8 == WORD, words, 0), axis=-1)
    return (word >> ((square % 8) * 4).astype(jnp.uint32)) & 0xF


def reaches(keys, counts_, length, current, mask, player) -> jax.Array:
    rows, here = keys[:, :8], current[:8]
    diff = _occupied(rows ^ here)
    leaves = diff & _occupied(here) & ~_occupied(rows)
    arrives = diff & _occupied(rows) & ~_occupied(here)

    def ones(bits):
        return jnp.sum(jax.lax.population_count(bits), axis=-1)

    two_squares = (ones(diff) == 2) & (ones(leaves) == 1) & (ones(arrives) == 1)
    frm, to = _square(leaves), _square(arrives)
    here_rows = jnp.broadcast_to(here, rows.shape)
    piece = _code_at(here_rows, frm)
    same_piece = piece == _code_at(rows, to)
    # The successor: the other side to move, the same castling, no en passant square.
    meta = (current[8] & 0xF) | ((1 - jnp.asarray(player, jnp.uint32)) << 11)
    same_meta = keys[:, 8] == meta
    # A move touching a rook's home square or moving a king with rights loses a right.
    rights = (current[8] & CASTLE_BITS) != 0
    touched = jnp.any(rights & ((frm[:, None] == CORNERS) | (to[:, None] == CORNERS)), axis=-1)
    king = (piece.astype(jnp.int32) - 1) % 6 + 1 == KING
    side_rights = jnp.where(piece <= 6, rights[0] | rights[1], rights[2] | rights[3])
    keeps_rights = ~touched & ~(king & side_rights)
    flip = jnp.where(jnp.asarray(player) == 1, 56, 0)
    action = ACTION_OF_MOVE[(frm ^ flip) * 64 + (to ^ flip)]
    legal = (action >= 0) & mask[jnp.maximum(action, 0)]
    twice = counts_ >= 2
    valid = jnp.arange(keys.shape[0]) < length
    found = two_squares & same_piece & same_meta & keeps_rights & legal & twice & valid
    return jnp.any(found)
