"""MinAtar Breakout's observation: four 10x10 boolean planes, [row][column][channel]."""

import jax.numpy as jnp

SIZE = 10
PADDLE, BALL, TRAIL, BRICK = 0, 1, 2, 3  # the game's channel order
PADDLE_ROW = SIZE - 1


def observe(ball_x, ball_y, pos, brick_map, last_x, last_y):
    """-> bool[10, 10, 4]: the paddle on the bottom row, the ball, where the ball was one
    step ago (its trail, which shows the direction), and the bricks."""
    obs = jnp.zeros((SIZE, SIZE, 4), dtype=bool)
    obs = obs.at[ball_y, ball_x, BALL].set(True)
    obs = obs.at[PADDLE_ROW, pos, PADDLE].set(True)
    obs = obs.at[last_y, last_x, TRAIL].set(True)
    return obs.at[..., BRICK].set(brick_map != 0)
