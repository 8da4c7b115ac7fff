"""MinAtar Seaquest's observation for one env: ten 10x10 boolean planes, [row][column][channel]."""

import jax.numpy as jnp

from .rules import MAX_OXYGEN, SIZE

SUB_FRONT, SUB_BACK, F_BULLET, TRAIL, E_BULLET, FISH, E_SUB, OXYGEN, DIVERS, DIVER = range(10)
_ROWS = jnp.arange(SIZE)


def _plane(records, length, with_trail: bool):
    """-> (objects bool[10, 10], trail bool[10, 10]): each object in use on its square, and
    the square behind it (the side it came from) when that square is on the screen."""
    used = jnp.arange(records.shape[0]) < length
    x, y = records[:, 0], records[:, 1]
    row = (y[:, None] == _ROWS[None, :]) & used[:, None]  # [W, rows]
    at = (row[:, :, None] & (x[:, None] == _ROWS[None, :])[:, None, :]).any(0)
    if not with_trail:
        return at, jnp.zeros((SIZE, SIZE), bool)
    behind = x - jnp.where(records[:, 2] == 1, 1, -1)
    trail = (row[:, :, None] & (behind[:, None] == _ROWS[None, :])[:, None, :]).any(0)
    return at, trail


def observe(s) -> jnp.ndarray:
    """-> bool[10, 10, 10] from the state: the sub's front and back (behind it, the way it
    faces), bullets, enemies and divers with their trails, and on the bottom row the oxygen
    gauge (a cell per 20 oxygen, from the left) and the divers aboard (from column 8 leftwards)."""
    cell = (_ROWS[:, None] == s.sub_y) & (_ROWS[None, :] == s.sub_x)
    back_x = s.sub_x - jnp.where(s.sub_or, 1, -1)
    back = (_ROWS[:, None] == s.sub_y) & (_ROWS[None, :] == back_x)
    bottom = _ROWS[:, None] == SIZE - 1
    oxygen = bottom & (_ROWS[None, :] < jnp.maximum(0, s.oxygen) * 10 // MAX_OXYGEN)
    count = s.diver_count
    divers_aboard = bottom & (_ROWS[None, :] >= 9 - count) & (_ROWS[None, :] < 9) & (count > 0)
    f_bullet, _ = _plane(s.f_bullets, s.f_bullets_length, False)
    e_bullet, _ = _plane(s.e_bullets, s.e_bullets_length, False)
    fish, fish_trail = _plane(s.e_fish, s.e_fish_length, True)
    sub, sub_trail = _plane(s.e_subs, s.e_subs_length, True)
    diver, diver_trail = _plane(s.divers, s.divers_length, True)
    trail = fish_trail | sub_trail | diver_trail
    planes = (cell, back, f_bullet, trail, e_bullet, fish, sub, oxygen, divers_aboard, diver)
    return jnp.stack(planes, axis=-1)
