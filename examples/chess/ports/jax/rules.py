"""Chess rules on one position (PettingZoo 1.27 `chess_v6` over python-chess 1.11), jax-traceable.

A board is int8[64] in python-chess's square order (a1=0, b1=1, ..., h8=63): 0 empty, 1..6
white pawn, knight, bishop, rook, queen, king, 7..12 black ones. Moves are generated in the
MOVER'S frame (black's position mirrored vertically with the colours swapped, as PettingZoo's
`legal_moves` mirrors the board), on bitboards of 8 rank rows (int32[8], bit f of row r the
square (file f, rank r)) moved by static row slices and bit shifts: no gathers, no
`lax.cond`, so vmap makes plain elementwise work of it; only the final mask is unpacked.

Exports:
    ACTIONS = 4672
    mover_grid(board: int8[64], player: int32) -> int8[8, 8]
        the board in the mover's frame as a [rank, file] grid, the mover's pieces coded 1..6.
    legal_moves(board: int8[64], player: int32, castling: bool[4], ep_square: int32)
            -> Moves(mask bool[4672], in_check bool, legal_ep bool, any_quiet bool)
        PettingZoo's action mask for the side `player` (0 white) to move; whether that side
        is in check; whether an en passant capture is legal (python-chess's
        `has_legal_en_passant`); whether a legal move neither moves a pawn nor captures
        (python-chess's `is_zeroing` false). castling is [white O-O, white O-O-O, black O-O,
        black O-O-O] (`clean_castling_rights`), ep_square python-chess's (-1 for None).
    decode(action: int32, player: int32) -> (from int32, to int32, underpromotion int32)
        the move's absolute squares; underpromotion 0 none, else the piece type 2..4.
    insufficient_material(board: int8[64]) -> bool
        python-chess's `is_insufficient_material()`.
    history_planes(board: int8[64], ep_square: int32, repeated: bool) -> bool[8, 8, 13]
        PettingZoo's `get_observation(board, 0)[:, :, 7:]`: white's pieces, black's, the
        repetition plane, with the en passant trick (a pawn that just double-pushed shown on
        its back rank).
    aux_planes(castling: bool[4], halfmove_clock: int32, player: int32) -> bool[8, 8, 7]
        the first 7 planes of `get_observation(board, player)`, in `player`'s frame before
        PettingZoo's observe flips player_1's view.

Hand-written known-good port, not model output.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

ACTIONS = 64 * 73
# PettingZoo's chess_utils order: queen directions (file step, rank step) as get_queen_dir
# counts them, knight jumps as get_knight_dir does.
QUEEN_DIRS = [(x, y) for x in (-1, 0, 1) for y in (-1, 0, 1) if (x, y) != (0, 0)]
KNIGHT_DIRS = [(x, y) for x in range(-2, 3) for y in range(-2, 3) if abs(x) + abs(y) == 3]
NORTH, NORTH_WEST, NORTH_EAST, EAST, WEST = 4, 2, 7, 6, 1  # indices into QUEEN_DIRS
PAWN, KNIGHT, BISHOP, ROOK, QUEEN, KING = 1, 2, 3, 4, 5, 6


def _plane_deltas() -> np.ndarray:
    """(file step, rank step) of each of the 73 planes, in the mover's frame."""
    deltas = [(dx * d, dy * d) for d in range(1, 8) for dx, dy in QUEEN_DIRS]
    deltas += KNIGHT_DIRS
    deltas += [(dx, 1) for dx in (-1, 0, 1) for _ in range(3)]
    return np.asarray(deltas, dtype=np.int32)


PLANE_DELTA = _plane_deltas()


def _action_of_move() -> np.ndarray:
    """The queen/knight-plane action of each (from, to) in the mover's frame, -1 if none."""
    table = -np.ones((64, 64), dtype=np.int32)
    for frm in range(64):
        f, r = frm % 8, frm // 8
        for plane in range(64):
            dx, dy = PLANE_DELTA[plane]
            if 0 <= f + dx < 8 and 0 <= r + dy < 8:
                table[frm, (r + dy) * 8 + f + dx] = (f * 8 + r) * 73 + plane
    return table


ACTION_OF_MOVE = jnp.asarray(_action_of_move().reshape(-1))
SQUARE = jnp.arange(64, dtype=jnp.int32)
FILE_BIT = jnp.asarray(1 << np.arange(8), jnp.int32)
FULL = 0xFF
STEPS = np.asarray(QUEEN_DIRS, dtype=np.int32)  # [8, 2] (file step, rank step)
NEAR = STEPS
BACK = STEPS[::-1]  # direction 7 - i is direction i reversed
JUMP = np.asarray(KNIGHT_DIRS, dtype=np.int32)
# [7 distances, 8 directions, 2]: plane (d - 1) * 8 + i's step.
FAR = np.stack([STEPS * d for d in range(1, 8)])
ORTHOGONAL = jnp.asarray([dx == 0 or dy == 0 for dx, dy in QUEEN_DIRS])[:, None]
RANK_2 = jnp.asarray([0, FULL, 0, 0, 0, 0, 0, 0], jnp.int32)
RANK_7 = jnp.asarray([0, 0, 0, 0, 0, 0, FULL, 0], jnp.int32)
E1 = jnp.asarray([1 << 4, 0, 0, 0, 0, 0, 0, 0], jnp.int32)

# A set of squares is a bitboard of 8 rank rows, int32[8]: bit f of row r is square (f, r).
# Shifts are then a static row slice and a bit shift, and a set 8 ints, not 64 bools: the
# planes of 4672 actions cost 73 x 8 ints per position until the final unpacking.


def _bits(cells: jax.Array) -> jax.Array:
    """bool[8, 8] [rank, file] -> the bitboard."""
    return jnp.sum(jnp.where(cells, FILE_BIT, 0), axis=-1, dtype=jnp.int32)


def _shift(x: jax.Array, dx: int, dy: int) -> jax.Array:
    """x [n, 8] read (dx, dy) on: out has square s where x has s + (dx, dy)."""
    pad = jnp.zeros((x.shape[0], 8), jnp.int32)
    rows = jnp.concatenate([pad, x, pad], axis=1)[:, 8 + dy : 16 + dy]
    return ((rows >> dx) if dx >= 0 else (rows << -dx)) & FULL


def _at(board: jax.Array, steps: np.ndarray) -> jax.Array:
    """board [..., 8] read at each of `steps` [..., 2] (board's leading axes broadcast
    against the steps' ones): out[..., k] has s where board[..., k] has s + steps[k]."""
    lead = steps.shape[:-1]
    shape = jnp.broadcast_shapes(board.shape[:-1], lead)
    count = int(np.prod(lead, dtype=np.int64))
    flat = jnp.broadcast_to(board, (*shape, 8)).reshape(-1, count, 8)
    flat_steps = steps.reshape(count, 2)
    moved = [_shift(flat[:, k], int(dx), int(dy)) for k, (dx, dy) in enumerate(flat_steps)]
    return jnp.stack(moved, axis=1).reshape(*shape, 8)


def _any(x: jax.Array, axis=-1) -> jax.Array:
    return jnp.any(x != 0, axis=axis)


def _union(x: jax.Array) -> jax.Array:
    """[k, 8] -> [8]: the squares in any of the k sets."""
    return jax.lax.reduce(x, jnp.int32(0), jax.lax.bitwise_or, (0,))


def _count(x: jax.Array) -> jax.Array:
    return jnp.sum(jax.lax.population_count(x), dtype=jnp.int32)


def _rays(start: jax.Array, passable: jax.Array, table: np.ndarray) -> jax.Array:
    """The squares reached from `start` stepping along each row of `table`, through
    `passable` squares, the first impassable one included."""

    def advance(_, carry):
        front, reach = carry
        front = _at(front & passable, table)
        return front, reach | front

    front = _at(start, table)
    return jax.lax.fori_loop(0, 6, advance, (front, front))[1]


def mover_grid(board: jax.Array, player: jax.Array) -> jax.Array:
    grid = board.reshape(8, 8)
    flipped = grid[::-1]
    swapped = jnp.where(flipped > 6, flipped - 6, jnp.where(flipped > 0, flipped + 6, 0))
    return jnp.where(player == 1, swapped, grid).astype(jnp.int8)


def _attacked(pieces: jax.Array, sliders: jax.Array, passable: jax.Array) -> jax.Array:
    """Squares the opponent attacks, sliders seeing through `passable`. pieces[c] is the
    bitboard of code c."""

    def advance(_, along):  # attacked along d: a slider one step on, or a passable square
        return _at(sliders | (passable & along), NEAR)  # attacked along d one step on

    along = jax.lax.fori_loop(0, 6, advance, _at(sliders, NEAR))
    att = _union(along)
    att = att | _union(_at(pieces[KNIGHT + 6], JUMP))
    att = att | _union(_at(pieces[KING + 6], NEAR))
    # An opponent pawn one rank up and one file aside (directions 2 and 7).
    return att | _union(_at(pieces[PAWN + 6], NEAR[[2, 7]]))


class Moves(NamedTuple):
    mask: jax.Array
    in_check: jax.Array
    legal_ep: jax.Array
    any_quiet: jax.Array


def legal_moves(board, player, castling, ep_square) -> Moves:
    player = jnp.asarray(player, jnp.int32)
    g = mover_grid(board, player)
    pieces = jnp.stack([_bits(g == code) for code in range(13)])  # [13, 8]
    empty = pieces[0]
    own = pieces[1] | pieces[2] | pieces[3] | pieces[4] | pieces[5] | pieces[6]
    enemy = FULL & ~(own | empty)
    king, pawn = pieces[KING], pieces[PAWN]
    # [8 directions, 8]: the opponent's pieces sliding along each direction's line.
    sliders = jnp.where(ORTHOGONAL, pieces[ROOK + 6], pieces[BISHOP + 6]) | pieces[QUEEN + 6]
    attacked = _attacked(pieces, sliders, empty | king)  # the king does not shield itself

    # Checks and pins, from rays cast out of the king (row i: along direction i).
    rays = _rays(king, empty, BACK)
    hits = _any(rays & sliders)
    shields = rays & own
    pins = _any(_rays(shields, empty, BACK) & sliders)
    pinned_on = jnp.where(pins[:, None], shields, 0)
    axis_pins = pinned_on | pinned_on[::-1]  # directions i and 7 - i are one line
    pinned = _union(pinned_on)
    knight_checkers = _union(_at(king, JUMP)) & pieces[KNIGHT + 6]
    pawn_checkers = _union(_at(king, NEAR[[0, 5]])) & pieces[PAWN + 6]
    checks = jnp.sum(hits) + _count(knight_checkers) + _count(pawn_checkers)
    check_squares = _union(jnp.where(hits[:, None], rays, 0)) | knight_checkers | pawn_checkers
    # A non-king move must land on the checking line (single check), nowhere in double check.
    block = jnp.where(checks == 0, FULL, jnp.where(checks == 1, check_squares, 0))

    # Queen-like planes [distance, direction]: path clear, landing, pin line.
    empty_at = _at(empty, FAR)
    clear = [jnp.full((8, 8), FULL, jnp.int32)]
    for d in range(1, 7):
        clear.append(clear[-1] & empty_at[d - 1])
    clear = jnp.stack(clear)
    lands = _at(FULL & ~own & block, FAR)
    axis_ok = (FULL & ~pinned) | axis_pins
    movers = jnp.where(ORTHOGONAL, pieces[ROOK], pieces[BISHOP]) | pieces[QUEEN]
    slides = movers & clear & lands & axis_ok
    steps = king & _at(FULL & ~(own | attacked), NEAR)
    quiet = _any(slides & empty_at, (0, 1, 2)) | _any(steps & empty_at[0], (0, 1))

    # Pawns: pushes (north, direction 4), captures (directions 2 and 7).
    block_at = _at(block, FAR[:2])
    push = pawn & empty_at[0, NORTH] & block_at[0, NORTH] & axis_ok[NORTH]
    double = pawn & RANK_2 & empty_at[0, NORTH] & empty_at[1, NORTH]
    double = double & block_at[1, NORTH] & axis_ok[NORTH]
    diagonals = np.asarray([NORTH_WEST, NORTH_EAST])
    takes = pawn & _at(enemy, FAR[0, diagonals]) & block_at[0, diagonals] & axis_ok[diagonals]

    # En passant: the king tested afresh with both pawns gone and the capturer on the ep
    # square (the rank-wise discovered check a pin test cannot see).
    ep = jnp.asarray(ep_square, jnp.int32)
    ep_m = jnp.where(player == 1, ep ^ 56, ep)
    ep_here = _bits((ep >= 0) & (SQUARE.reshape(8, 8) == ep_m))
    captured = _at(ep_here, NEAR[NORTH])  # the double-pushed pawn, one rank below
    sources = _at(ep_here, NEAR[diagonals])  # [2, 8]
    after = (empty | sources | captured) & ~ep_here
    king_rays = _rays(jnp.broadcast_to(king, (2, 8, 8)), after[:, None], BACK)
    seen = _any(king_rays & sliders, (1, 2))
    ep_unchecked = ~_any(knight_checkers) & ~_any(pawn_checkers & ~captured)
    en_passant = pawn & sources & jnp.where(ep_unchecked & ~seen, FULL, 0)[:, None]
    takes = takes | en_passant

    # Castling: the king on e1, the right, empty squares between, no attacked square passed.
    rights = jnp.where(player == 1, castling[2:], castling[:2])
    short = rights[0] & ((empty[0] & 0x60) == 0x60) & ((attacked[0] & 0x70) == 0)
    long = rights[1] & ((empty[0] & 0x0E) == 0x0E) & ((attacked[0] & 0x1C) == 0)
    castles = king & E1 & jnp.where(jnp.stack([long, short]), FULL, 0)[:, None]  # W, E
    quiet = quiet | _any(castles, (0, 1))

    queen_like = slides.at[0].set(slides[0] | steps)
    queen_like = queen_like.at[0, NORTH].set(queen_like[0, NORTH] | push)
    queen_like = queen_like.at[1, NORTH].set(queen_like[1, NORTH] | double)
    queen_like = queen_like.at[0, NORTH_WEST].set(queen_like[0, NORTH_WEST] | takes[0])
    queen_like = queen_like.at[0, NORTH_EAST].set(queen_like[0, NORTH_EAST] | takes[1])
    queen_like = queen_like.at[1, WEST].set(queen_like[1, WEST] | castles[0])
    queen_like = queen_like.at[1, EAST].set(queen_like[1, EAST] | castles[1])
    jumps = pieces[KNIGHT] & _at(FULL & ~own & block, JUMP) & ~pinned
    quiet = quiet | _any(jumps & _at(empty, JUMP), (0, 1))
    # Underpromotions: the 7th rank's pawn moves again, three planes (N, B, R) per direction.
    pawn_moves = jnp.stack([takes[0], push, takes[1]]) & RANK_7
    under = jnp.repeat(pawn_moves, 3, axis=0)
    planes = jnp.concatenate([queen_like.reshape(56, 8), jumps, under])  # [73, 8 ranks]
    cells = (planes[:, :, None] & FILE_BIT) != 0  # [plane, rank, file]
    # -> action (file * 8 + rank) * 73 + plane
    mask = cells.transpose(2, 1, 0).reshape(ACTIONS)
    return Moves(mask, checks > 0, _any(en_passant, (0, 1)), quiet)


def decode(action, player):
    action = jnp.asarray(action, jnp.int32)
    source, plane = action // 73, action % 73
    f, r = source // 8, source % 8
    delta = jnp.asarray(PLANE_DELTA)[plane]
    frm = r * 8 + f
    to = (r + delta[1]) * 8 + f + delta[0]
    flip = jnp.where(player == 1, 56, 0)
    under = jnp.where(plane >= 64, KNIGHT + (plane - 64) % 3, 0)
    return frm ^ flip, to ^ flip, under


def insufficient_material(board) -> jax.Array:
    counts = [jnp.sum(board == code) for code in range(13)]
    square = jnp.arange(64)
    dark = ((square // 8 + square % 8) % 2) == 0  # a1 is dark
    bishops = (board == BISHOP) | (board == BISHOP + 6)
    same_colour = ~jnp.any(bishops & dark) | ~jnp.any(bishops & ~dark)
    no_pawns_knights = counts[PAWN] + counts[PAWN + 6] + counts[KNIGHT] + counts[KNIGHT + 6] == 0

    def side(base, other):
        heavy = counts[base + PAWN] + counts[base + ROOK] + counts[base + QUEEN]
        pieces = sum(counts[base + c] for c in range(1, 7))
        other_minor = sum(counts[other + c] for c in (PAWN, KNIGHT, BISHOP, ROOK))
        knights = (pieces <= 2) & (other_minor == 0)
        bishops_only = same_colour & no_pawns_knights
        return (heavy == 0) & jnp.where(
            counts[base + KNIGHT] > 0,
            knights,
            jnp.where(counts[base + BISHOP] > 0, bishops_only, True),
        )

    return side(0, 6) & side(6, 0)


def history_planes(board, ep_square, repeated) -> jax.Array:
    grid = board.reshape(8, 8)
    ep = jnp.asarray(ep_square, jnp.int32)
    square = SQUARE.reshape(8, 8)
    # python-chess's ep square sits behind the pawn that just double-pushed: PettingZoo
    # shows that pawn on its own back rank (`if square:` - the ep square is never a1).
    white_pushed = (ep > 0) & (ep < 32)
    black_pushed = (ep > 0) & (ep >= 32)
    pawn_gone = (white_pushed & (square == ep + 8)) | (black_pushed & (square == ep - 8))
    pawn_shown_w = white_pushed & (square == ep % 8)
    pawn_shown_b = black_pushed & (square == 56 + ep % 8)
    planes = []
    for code in range(1, 13):
        plane = grid == code
        if code == PAWN:
            plane = (plane & ~pawn_gone) | pawn_shown_w
        if code == PAWN + 6:
            plane = (plane & ~pawn_gone) | pawn_shown_b
        planes.append(plane)
    planes.append(jnp.broadcast_to(jnp.asarray(repeated, jnp.bool_), (8, 8)))
    return jnp.stack(planes, axis=-1)[::-1]  # row 0 is rank 8


def aux_planes(castling, halfmove_clock, player) -> jax.Array:
    player = jnp.asarray(player, jnp.int32)
    ones = jnp.ones((8, 8), jnp.bool_)
    # The mover's frame's castling: the mirrored board's h1 right is black's kingside.
    rights = jnp.where(player == 1, castling[jnp.asarray([2, 3, 0, 1])], castling)
    clock_square = (SQUARE.reshape(8, 8) == halfmove_clock // 2)[::-1]
    planes = [ones & rights[k] for k in range(4)]
    planes += [ones & (player == 1), clock_square, ones]
    return jnp.stack(planes, axis=-1)
