"""MinAtar Asterix's observation: four 10x10 boolean planes, [row][column][channel]."""

import numpy as np

from .rules import SIZE, SLOT_ROWS

PLAYER, ENEMY, TRAIL, GOLD = 0, 1, 2, 3


def observe(player_x, player_y, taken, x, right, gold):
    """-> bool[B, 10, 10, 4]: the player, enemies, gold, and the square behind each object
    (the side it came from), when that square is on the screen."""
    batch = len(player_x)
    rows = np.arange(batch)
    obs = np.zeros((batch, SIZE, SIZE, 4), dtype=bool)
    obs[rows, player_y, player_x, PLAYER] = True
    b, slot = np.nonzero(taken)
    row = SLOT_ROWS[slot]
    column = x[b, slot]
    obs[b, row, column, np.where(gold[b, slot], GOLD, ENEMY)] = True
    behind = column - np.where(right[b, slot], 1, -1)
    seen = (behind >= 0) & (behind <= SIZE - 1)
    obs[b[seen], row[seen], behind[seen], TRAIL] = True
    return obs
