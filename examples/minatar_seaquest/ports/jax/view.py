"""MinAtar Seaquest's observation for one env: ten 10x10 boolean planes, [row][column][channel].

Each plane is built as ten row integers, bit x of row y set for an object on (x, y), and
unpacked to booleans once at the end: marking squares on an [objects, 10, 10] grid per list
is ten times the work (objects x 100 squares against objects x 10 rows), and its reduction
over the objects runs one element at a time on CPU. An object and the trail behind it share
a row, so one pass over a list's rows makes both planes. The planes are stacked behind an
optimisation barrier, which keeps the stack in memory for the unpack to read: a bare
`jnp.stack` fused into the unpack picks its operand element by element (in MinAtar
Asterix's view, three times slower), and a sum of ten terms is computed again per cell.
Hand-written known-good port, not model output.
"""

import jax
import jax.numpy as jnp

from .rules import MAX_OXYGEN, SIZE

SUB_FRONT, SUB_BACK, F_BULLET, TRAIL, E_BULLET, FISH, E_SUB, OXYGEN, DIVERS, DIVER = range(10)
_ROWS = jnp.arange(SIZE)
_BITS = jnp.left_shift(1, _ROWS)  # column x as bit x


def _bit(x, shown):
    """-> int32: bit x where `shown` and x is on the screen, else 0."""
    return jnp.where(shown & (x >= 0) & (x < SIZE), jnp.left_shift(1, jnp.clip(x, 0, SIZE - 1)), 0)


def _rows(bits, y):
    """-> int32[10]: for each row, the OR of the `bits` of the slots on it."""
    rows = jnp.zeros(SIZE, jnp.int32)
    for w in range(y.shape[0]):  # ORs slot by slot: a reduction over the slots is slower on CPU
        rows = rows | jnp.where(y[w] == _ROWS, bits[w], 0)
    return rows


def _plane(records, length, with_trail: bool):
    """-> (objects int32[10], trail int32[10]) as row bits: each object in use on its square,
    and the square behind it (the side it came from) when that square is on the screen.
    Both come from one pass over the rows: the trail's bits ride in each row's upper half."""
    used = jnp.arange(records.shape[0]) < length
    records = records.astype(jnp.int32)  # stored as int8; a row's bits need ten
    x, y = records[:, 0], records[:, 1]
    bits = _bit(x, used)
    if not with_trail:
        return _rows(bits, y), jnp.zeros(SIZE, jnp.int32)
    behind = _bit(x - jnp.where(records[:, 2] == 1, 1, -1), used)
    rows = _rows(bits | jnp.left_shift(behind, 16), y)
    return rows & 0xFFFF, jnp.right_shift(rows, 16)


def observe(s) -> jnp.ndarray:
    """-> bool[10, 10, 10] from the state: the sub's front and back (behind it, the way it
    faces), bullets, enemies and divers with their trails, and on the bottom row the oxygen
    gauge (a cell per 20 oxygen, from the left) and the divers aboard (from column 8 leftwards)."""
    on_sub_row = s.sub_y == _ROWS
    cell = jnp.where(on_sub_row, _bit(s.sub_x, True), 0)
    back = jnp.where(on_sub_row, _bit(s.sub_x - jnp.where(s.sub_or, 1, -1), True), 0)
    bottom = _ROWS == SIZE - 1
    gauge = jnp.maximum(0, s.oxygen) * 10 // MAX_OXYGEN  # cells 0..gauge-1
    oxygen = jnp.where(bottom, jnp.left_shift(1, jnp.clip(gauge, 0, SIZE)) - 1, 0)
    count = s.diver_count
    # Columns 9 - count .. 8: bits below 9 less bits below 9 - count.
    aboard = (1 << 9) - jnp.left_shift(1, jnp.clip(9 - count, 0, 9))
    divers_aboard = jnp.where(bottom & (count > 0), aboard, 0)
    f_bullet, _ = _plane(s.f_bullets, s.f_bullets_length, False)
    e_bullet, _ = _plane(s.e_bullets, s.e_bullets_length, False)
    fish, fish_trail = _plane(s.e_fish, s.e_fish_length, True)
    sub, sub_trail = _plane(s.e_subs, s.e_subs_length, True)
    diver, diver_trail = _plane(s.divers, s.divers_length, True)
    trail = fish_trail | sub_trail | diver_trail
    planes = (cell, back, f_bullet, trail, e_bullet, fish, sub, oxygen, divers_aboard, diver)
    # Behind a barrier the stack is made once, in memory, where the unpack below reads it;
    # fused into the unpack, each of its 1,000 cells would pick its plane afresh.
    rows = jax.lax.optimization_barrier(jnp.stack(planes, axis=1))  # [rows, channels]
    return (rows[:, None, :] & _BITS[None, :, None]) != 0
