"""MinAtar Freeway's observation for one env: seven 10x10 boolean planes,
[row][column][channel] (hand-written known-good port)."""

import jax.numpy as jnp

from .rules import CHICKEN_COLUMN, LANE_ROWS, SIZE

CHICKEN, CAR = 0, 1
# Channels 2..6: the square behind a car, by how many frames it waits between moves (1..5),
# which shows both its direction and its speed.
TRAIL = 1


def observe(car_x, car_speed, car_right, pos):
    """-> bool[10, 10, 7]: the chicken, the cars, and each car's trail."""
    obs = jnp.zeros((SIZE, SIZE, 7), dtype=bool)
    obs = obs.at[pos, CHICKEN_COLUMN, CHICKEN].set(True)
    obs = obs.at[LANE_ROWS, car_x, CAR].set(True)
    behind = (car_x - jnp.where(car_right, 1, -1)) % SIZE
    return obs.at[LANE_ROWS, behind, TRAIL + car_speed].set(True)
