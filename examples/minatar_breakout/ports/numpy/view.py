"""MinAtar Breakout's observation: four 10x10 boolean planes, [row][column][channel]."""

import numpy as np

SIZE = 10
PADDLE, BALL, TRAIL, BRICK = 0, 1, 2, 3  # the game's channel order
PADDLE_ROW = SIZE - 1


def observe(ball_x, ball_y, pos, brick_map, last_x, last_y):
    """-> bool[B, 10, 10, 4]: the paddle on the bottom row, the ball, where the ball was one
    step ago (its trail, which shows the direction), and the bricks."""
    rows = np.arange(len(ball_x))
    obs = np.zeros((len(ball_x), SIZE, SIZE, 4), dtype=bool)
    obs[rows, ball_y, ball_x, BALL] = True
    obs[rows, PADDLE_ROW, pos, PADDLE] = True
    obs[rows, last_y, last_x, TRAIL] = True
    obs[..., BRICK] = brick_map != 0
    return obs
