"""MinAtar Seaquest's observation: ten 10x10 boolean planes, [row][column][channel]."""

import numpy as np

from .rules import MAX_OXYGEN, SIZE

SUB_FRONT, SUB_BACK, F_BULLET, TRAIL, E_BULLET, FISH, E_SUB, OXYGEN, DIVERS, DIVER = range(10)


def _objects(obs, records, length, plane, trail):
    """Draws each object in use on `plane`, and, with `trail`, the square behind it (the
    side it came from) when that square is on the screen."""
    b, slot = np.nonzero(np.arange(records.shape[1])[None, :] < length[:, None])
    x, y = records[b, slot, 0], records[b, slot, 1]
    obs[b, y, x, plane] = True
    if trail:
        behind = x - np.where(records[b, slot, 2] == 1, 1, -1)
        seen = (behind >= 0) & (behind <= SIZE - 1)
        obs[b[seen], y[seen], behind[seen], TRAIL] = True


def observe(s):
    """-> bool[B, 10, 10, 10] from the state dict: the sub's front and back (behind it, the
    way it faces), bullets, enemies and divers with their trails, and on the bottom row the
    oxygen gauge (a cell per 20 oxygen, from the left) and the divers aboard (from column 8
    leftwards)."""
    batch = len(s["sub_x"])
    rows = np.arange(batch)
    obs = np.zeros((batch, SIZE, SIZE, 10), dtype=bool)
    obs[rows, s["sub_y"], s["sub_x"], SUB_FRONT] = True
    back = s["sub_x"] - np.where(s["sub_or"], 1, -1)
    obs[rows, s["sub_y"], back, SUB_BACK] = True
    column = np.arange(SIZE)[None, :]
    obs[:, 9, :, OXYGEN] = column < (np.maximum(0, s["oxygen"]) * 10 // MAX_OXYGEN)[:, None]
    count = s["diver_count"][:, None]
    obs[:, 9, :, DIVERS] = (column >= 9 - count) & (column < 9) & (count > 0)
    for name, plane, trail in (
        ("f_bullets", F_BULLET, False),
        ("e_bullets", E_BULLET, False),
        ("e_fish", FISH, True),
        ("e_subs", E_SUB, True),
        ("divers", DIVER, True),
    ):
        _objects(obs, s[name], s[f"{name}.length"], plane, trail)
    return obs
