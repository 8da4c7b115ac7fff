"""MinAtar Freeway's observation: seven 10x10 boolean planes, [row][column][channel]."""

import numpy as np

from .rules import CHICKEN_COLUMN, LANE_ROWS, LANES, SIZE

CHICKEN, CAR = 0, 1
# Channels 2..6: the square behind a car, by how many frames it waits between moves (1..5),
# which shows both its direction and its speed.
TRAIL = 1


def observe(car_x, car_speed, car_right, pos):
    """-> bool[B, 10, 10, 7]: the chicken, the cars, and each car's trail."""
    batch = len(pos)
    rows = np.arange(batch)
    obs = np.zeros((batch, SIZE, SIZE, 7), dtype=bool)
    obs[rows, pos, CHICKEN_COLUMN, CHICKEN] = True
    lanes = np.broadcast_to(LANE_ROWS, (batch, LANES))
    every = np.broadcast_to(rows[:, None], (batch, LANES))
    obs[every, lanes, car_x, CAR] = True
    behind = (car_x - np.where(car_right, 1, -1)) % SIZE
    obs[every, lanes, behind, TRAIL + car_speed] = True
    return obs
