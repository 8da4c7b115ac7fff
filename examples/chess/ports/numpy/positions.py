"""The repetition bookkeeping of PettingZoo's chess_v6 (python-chess's `is_repetition`,
`can_claim_threefold_repetition`, `can_claim_fifty_moves`) over a batch, in absolute
squares (white's frame); no function modifies its inputs.

A position's key is int8[67] (python-chess's `_transposition_key`): the 64 square codes
(1..6 white, 7..12 black), the castling mask (1 white kingside, 2 white queenside, 4 black
kingside, 8 black queenside), the en passant square only when a legal en passant capture
exists (else -1), the side to move (0 white, 1 black). `positions` int8[B, 100, 67] with
`length` int[B] holds the earlier positions that count for repetition, oldest first: those
a reversible move was played from, back to the last irreversible move.

Exports:
    CAPACITY = 100
    key(boards, castling int8[B, 4], ep_legal int[B], side int[B]) -> int8[B, 67]
    appended(positions, length, keys, keep: bool[B]) -> (positions, length)
        `keys` appended where `keep`, the history emptied elsewhere (an irreversible move).
    seen(positions, length, keys) -> int[B]
        how often each key occurs among the positions.
    repetition_within_reach(positions, length, boards, castling, side, mask) -> bool[B]
        whether a legal reversible move reaches a position seen twice among the positions.

Hand-written known-good port, not model output.
"""

import numpy as np

from .rules import action_of_move

CAPACITY = 100
KEY = 67
CASTLING_BITS = np.array([1, 2, 4, 8])


def key(boards, castling, ep_legal, side) -> np.ndarray:
    mask = (np.asarray(castling, dtype=np.int64) * CASTLING_BITS).sum(axis=1)
    tail = np.stack([mask, np.asarray(ep_legal), np.asarray(side)], axis=1)
    return np.concatenate([np.asarray(boards), tail], axis=1).astype(np.int8)


def appended(positions, length, keys, keep) -> tuple[np.ndarray, np.ndarray]:
    positions = np.asarray(positions).copy()
    length = np.asarray(length, dtype=np.int64)
    rows = np.flatnonzero(keep & (length < CAPACITY))
    positions[rows, length[rows]] = np.asarray(keys)[rows]
    return positions, np.where(keep, np.minimum(length + 1, CAPACITY), 0)


def _packed(rows: np.ndarray) -> np.ndarray:
    """Keys packed exactly into five 64-bit words (4 bits a square), so rows compare fast."""
    rows = np.asarray(rows).astype(np.int64)
    squares = rows[..., :64].reshape((*rows.shape[:-1], 4, 16)).astype(np.uint64)
    weights = np.uint64(16) ** np.arange(16, dtype=np.uint64)
    words = (squares * weights).sum(axis=-1, dtype=np.uint64)
    tail = rows[..., 64] + 16 * (rows[..., 65] + 1) + 2048 * rows[..., 66]
    return np.concatenate([words, tail[..., None].astype(np.uint64)], axis=-1)


def _valid(positions: np.ndarray, length) -> np.ndarray:
    return np.arange(positions.shape[1])[None, :] < np.asarray(length)[:, None]


def seen(positions, length, keys) -> np.ndarray:
    # Only rows up to the longest history can count: most of the capacity is padding.
    window = np.asarray(positions)[:, : int(np.max(length, initial=0))]
    same = (_packed(window) == _packed(keys)[:, None, :]).all(axis=2)
    return (same & _valid(window, length)).sum(axis=1)


def repetition_within_reach(positions, length, boards, castling, side, mask) -> np.ndarray:
    """python-chess's second threefold test. Only a reversible move can reach an earlier
    position of the window (a pawn move, capture or lost castling right changes what every
    position since the last irreversible move shares), and after it no en passant is
    possible: so a position p qualifies when it differs from the board in exactly the
    moving piece's two squares, keeps the castling rights, has no en passant, the other
    side to move, is seen twice, and the move is legal and keeps the castling rights."""
    positions = np.asarray(positions)
    boards = np.asarray(boards)
    size = len(boards)
    longest = int(np.max(length, initial=0))
    found = np.zeros(size, dtype=bool)
    if longest == 0:
        return found
    window = positions[:, :longest]
    valid = _valid(window, length)
    packed = _packed(window)
    twice = (packed[:, :, None, :] == packed[:, None, :, :]).all(axis=3)
    twice = (twice & valid[:, None, :]).sum(axis=2) >= 2
    castling_mask = key(boards, castling, np.zeros(size), side)[:, 64]
    candidate = valid & twice & (window[:, :, 65] == -1)
    candidate &= window[:, :, 64] == castling_mask[:, None]
    candidate &= window[:, :, 66] == (1 - np.asarray(side))[:, None]
    differs = window[:, :, :64] != boards[:, None, :]
    candidate &= differs.sum(axis=2) == 2
    env, row = np.nonzero(candidate)
    if len(env) == 0:
        return found
    before, after = boards[env], window[env, row, :64]
    source = np.argmax((before != 0) & (after == 0), axis=1)
    target = np.argmax((before == 0) & (after != 0), axis=1)
    piece = before[np.arange(len(env)), source]
    moved = (after[np.arange(len(env)), target] == piece) & (
        before[np.arange(len(env)), target] == 0
    )
    moved &= after[np.arange(len(env)), source] == 0
    # The mover's own piece, not a pawn; its action is read in the mover's frame.
    black = np.asarray(side)[env] == 1
    own = np.where(black, piece >= 8, (piece >= 2) & (piece <= 6))
    frame = np.where(black, 56, 0)
    actions = action_of_move(source ^ frame, target ^ frame)
    legal = np.asarray(mask)[env, np.maximum(actions, 0)] & (actions >= 0)
    keeps_rights = ~_touches_rights(source, target, piece, castling_mask[env])
    np.logical_or.at(found, env, moved & own & legal & keeps_rights)
    return found


def _touches_rights(source, target, piece, castling_mask) -> np.ndarray:
    """python-chess's `_reduces_castling_rights` for a non-capturing move: a king moving
    while its side keeps a right, or a rook leaving a corner that carries one."""
    corner_bits = {7: 1, 0: 2, 63: 4, 56: 8}
    touched = np.zeros(len(source), dtype=bool)
    for corner, bit in corner_bits.items():
        touched |= ((source == corner) | (target == corner)) & ((castling_mask & bit) > 0)
    touched |= (piece == 6) & ((castling_mask & 3) > 0)
    touched |= (piece == 12) & ((castling_mask & 12) > 0)
    return touched
