"""Chess rules on one position (PettingZoo 1.27 `chess_v6` over python-chess 1.11), jax-traceable.

A board is int8[64] in python-chess's square order (a1=0, b1=1, ..., h8=63): 0 empty, 1..6
white pawn, knight, bishop, rook, queen, king, 7..12 black ones. Moves are generated in the
MOVER'S frame (black's position mirrored vertically with the colours swapped, as PettingZoo's
`legal_moves` mirrors the board), on bool grids [rank, file] moved by static shifts: no
gathers, no `lax.cond`, only selects, so vmap makes plain elementwise work of it.

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
RANK = jnp.arange(8, dtype=jnp.int32)[:, None] * jnp.ones((1, 8), jnp.int32)
FILE = jnp.arange(8, dtype=jnp.int32)[None, :] * jnp.ones((8, 1), jnp.int32)


def shift(grid: jax.Array, df: int, dr: int, fill=False) -> jax.Array:
    """out[r, f] = grid[r + dr, f + df], `fill` off the board (static steps: slices)."""
    padded = jnp.pad(grid, 7, constant_values=fill)
    return padded[7 + dr : 15 + dr, 7 + df : 15 + df]


def mover_grid(board: jax.Array, player: jax.Array) -> jax.Array:
    grid = board.reshape(8, 8)
    flipped = grid[::-1]
    swapped = jnp.where(flipped > 6, flipped - 6, jnp.where(flipped > 0, flipped + 6, 0))
    return jnp.where(player == 1, swapped, grid).astype(jnp.int8)


def _slider_reach(start: jax.Array, passable: jax.Array, df: int, dr: int) -> jax.Array:
    """Squares reached stepping (df, dr) from `start`, through `passable` squares, the first
    impassable one included."""
    front = shift(start, df, dr)
    reach = front
    for _ in range(6):
        front = shift(front & passable, df, dr)
        reach = reach | front
    return reach


def _attacked(g: jax.Array, passable: jax.Array) -> jax.Array:
    """Squares the opponent (codes 7..12) attacks, sliders seeing through `passable`."""
    enemy = [g == code + 6 for code in range(7)]
    att = shift(enemy[PAWN], -1, 1) | shift(enemy[PAWN], 1, 1)
    for dx, dy in KNIGHT_DIRS:
        att = att | shift(enemy[KNIGHT], dx, dy)
    for i, (dx, dy) in enumerate(QUEEN_DIRS):
        att = att | shift(enemy[KING], dx, dy)
        slider = enemy[QUEEN] | (enemy[ROOK] if dx == 0 or dy == 0 else enemy[BISHOP])
        # Attacked along (dx, dy): a slider there, or an empty square there attacked so.
        along = shift(slider, dx, dy)
        for _ in range(6):
            along = shift(slider | (passable & along), dx, dy)
        att = att | along
    return att


def _king_seen_by_slider(king: jax.Array, empty: jax.Array, g: jax.Array) -> jax.Array:
    seen = jnp.bool_(False)
    for dx, dy in QUEEN_DIRS:
        slider = (g == QUEEN + 6) | (g == (ROOK if dx == 0 or dy == 0 else BISHOP) + 6)
        reach = _slider_reach(king, empty, -dx, -dy)
        seen = seen | jnp.any(reach & slider)
    return seen


class Moves(NamedTuple):
    mask: jax.Array
    in_check: jax.Array
    legal_ep: jax.Array
    any_quiet: jax.Array


def legal_moves(board, player, castling, ep_square) -> Moves:
    player = jnp.asarray(player, jnp.int32)
    g = mover_grid(board, player)
    own = (g >= 1) & (g <= 6)
    enemy = g >= 7
    empty = g == 0
    mine = [g == code for code in range(7)]
    king = mine[KING]
    attacked = _attacked(g, empty | king)  # the king steps off its square: it does not shield

    # Checks and pins, from rays cast out of the king. (A ray out of the king in direction
    # (dx, dy) is the king shifted by (-dx, -dy): out[r, f] = in[r + dr, f + df].)
    checks = jnp.int32(0)
    check_squares = jnp.zeros((8, 8), jnp.bool_)
    pinned_axis = []
    for i, (dx, dy) in enumerate(QUEEN_DIRS):
        slider = (g == QUEEN + 6) | (g == (ROOK if dx == 0 or dy == 0 else BISHOP) + 6)
        ray = _slider_reach(king, empty, -dx, -dy)
        hit = jnp.any(ray & slider)
        checks = checks + hit
        check_squares = check_squares | (ray & hit)
        shield = ray & own
        behind = _slider_reach(shield, empty, -dx, -dy)
        pin = jnp.any(behind & slider)
        pinned_axis.append(shield & pin)
    # Directions i and 7 - i are one line.
    axis_pins = [pinned_axis[i] | pinned_axis[7 - i] for i in range(4)]
    pinned = axis_pins[0] | axis_pins[1] | axis_pins[2] | axis_pins[3]
    knight_checkers = jnp.zeros((8, 8), jnp.bool_)
    for dx, dy in KNIGHT_DIRS:
        knight_checkers = knight_checkers | shift(king, -dx, -dy)
    knight_checkers = knight_checkers & (g == KNIGHT + 6)
    pawn_checkers = (shift(king, -1, -1) | shift(king, 1, -1)) & (g == PAWN + 6)
    checks = checks + jnp.sum(knight_checkers) + jnp.sum(pawn_checkers)
    check_squares = check_squares | knight_checkers | pawn_checkers
    # A non-king move must land on the checking line (single check), nowhere in double check.
    block = jnp.where(checks == 0, True, (checks == 1) & check_squares)

    ep = jnp.asarray(ep_square, jnp.int32)
    ep_m = jnp.where(player == 1, ep ^ 56, ep)
    ep_grid = (ep >= 0) & (RANK * 8 + FILE == ep_m)
    captured = shift(ep_grid, 0, 1)  # the double-pushed pawn, one rank below the ep square
    # Non-slider checks other than by that pawn rule out an en passant capture.
    ep_unchecked = ~jnp.any(knight_checkers) & ~jnp.any(pawn_checkers & ~captured)

    planes = []
    quiet = jnp.bool_(False)
    legal_ep = jnp.bool_(False)
    no_own = ~own
    for d in range(1, 8):
        for i, (dx, dy) in enumerate(QUEEN_DIRS):
            axis_ok = ~pinned | axis_pins[min(i, 7 - i)]
            slider = mine[QUEEN] | (mine[ROOK] if dx == 0 or dy == 0 else mine[BISHOP])
            clear = jnp.ones((8, 8), jnp.bool_)
            for k in range(1, d):
                clear = clear & shift(empty, dx * k, dy * k)
            lands = shift(no_own, dx * d, dy * d) & shift(block, dx * d, dy * d) & axis_ok
            plane = slider & clear & lands
            quiet = quiet | jnp.any(plane & shift(empty, dx * d, dy * d))
            if d == 1:
                steps = king & shift(no_own & ~attacked, dx, dy)
                quiet = quiet | jnp.any(steps & shift(empty, dx, dy))
                plane = plane | steps
            if i == NORTH and d <= 2:
                push = mine[PAWN] & clear & shift(empty, 0, d) & shift(block, 0, d) & axis_ok
                plane = plane | (push & (RANK == 1) if d == 2 else push)
            if i in (NORTH_WEST, NORTH_EAST) and d == 1:
                takes = mine[PAWN] & shift(enemy, dx, 1) & shift(block, dx, 1) & axis_ok
                # En passant: test the king afresh with both pawns gone and the capturer on
                # the ep square (the rank-wise discovered check a pin test cannot see).
                source = shift(ep_grid, dx, 1)
                after = (empty | source | captured) & ~ep_grid
                safe = ~_king_seen_by_slider(king, after, g)  # the pawn taken is no slider
                en_passant = mine[PAWN] & source & ep_unchecked & safe
                legal_ep = legal_ep | jnp.any(en_passant)
                plane = plane | takes | en_passant
            if d == 2 and i in (EAST, WEST):
                home = (RANK == 0) & (FILE == 4) & king
                if i == EAST:
                    path = empty[0, 5] & empty[0, 6] & ~jnp.any(attacked[0, 4:7])
                    right = jnp.where(player == 1, castling[2], castling[0])
                else:
                    path = empty[0, 1] & empty[0, 2] & empty[0, 3] & ~jnp.any(attacked[0, 2:5])
                    right = jnp.where(player == 1, castling[3], castling[1])
                castle = home & path & right
                quiet = quiet | jnp.any(castle)
                plane = plane | castle
            planes.append(plane)
    for dx, dy in KNIGHT_DIRS:
        jump = mine[KNIGHT] & shift(no_own, dx, dy) & shift(block, dx, dy) & ~pinned
        quiet = quiet | jnp.any(jump & shift(empty, dx, dy))
        planes.append(jump)
    # Underpromotions: the pawn moves of the 7th rank again, one plane per piece.
    promoting = (RANK == 6) & mine[PAWN]
    for plane in (planes[NORTH_WEST], planes[NORTH], planes[NORTH_EAST]):
        planes.extend([plane & promoting] * 3)
    # [plane, rank, file] -> action (file * 8 + rank) * 73 + plane
    mask = jnp.stack(planes).transpose(2, 1, 0).reshape(ACTIONS)
    return Moves(mask, checks > 0, legal_ep, quiet)


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
    square = RANK * 8 + FILE
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
    clock_square = (RANK * 8 + FILE == halfmove_clock // 2)[::-1]
    planes = [ones & rights[k] for k in range(4)]
    planes += [ones & (player == 1), clock_square, ones]
    return jnp.stack(planes, axis=-1)
