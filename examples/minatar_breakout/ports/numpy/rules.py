"""MinAtar Breakout's step for B envs at once (hand-written known-good port).

The ball moves one cell diagonally per step. It bounces off the side walls and the ceiling,
breaks the first brick it runs into (at most one per two steps: `strike` remembers the hit
of the step before), and on reaching the paddle's row either bounces off the paddle or is
lost. When it reaches that row with no brick left, the three brick rows are laid again.
"""

import numpy as np

SIZE = 10
# The wrapper's minimal action set maps an action index to the game's code: no-op 0, left
# 1, right 3. It is a Python list lookup, so -1..-3 pick from the end; numpy's indexing does
# the same.
ACTION_SET = np.array([0, 1, 3])
GAME_LEFT, GAME_RIGHT = 1, 3
# Ball directions: 0 up-left, 1 up-right, 2 down-right, 3 down-left.
STEP_X = np.array([-1, 1, 1, -1])
STEP_Y = np.array([-1, -1, 1, 1])
OFF_SIDE_WALL = np.array([1, 0, 3, 2])  # horizontal component reversed
OFF_CEILING = np.array([3, 2, 1, 0])  # vertical component reversed (also bricks, the paddle's top)
OFF_PADDLE_EDGE = np.array([2, 3, 0, 1])  # both reversed: the ball comes back the way it came
BRICK_ROWS = slice(1, 4)


def move_paddle(pos, actions):
    """int[B] -> int[B]: one column left or right, stopping at the screen's edges."""
    code = ACTION_SET[actions]
    step = np.where(code == GAME_LEFT, -1, np.where(code == GAME_RIGHT, 1, 0))
    return np.clip(pos + step, 0, SIZE - 1)


def transition(ball_x, ball_y, ball_dir, pos, brick_map, strike, last_x, last_y, terminal, actions):
    """One step of every env. Returns (ball_x, ball_y, ball_dir, pos, brick_map, strike,
    last_x, last_y, terminal, reward float64[B]); the inputs are not modified. An env that
    is already terminal is left as it is, with reward 0."""
    live = ~terminal
    rows = np.arange(len(ball_x))
    bricks = brick_map.copy()
    new_pos = np.where(live, move_paddle(pos, actions), pos)

    x = ball_x + STEP_X[ball_dir]
    y = ball_y + STEP_Y[ball_dir]
    direction = ball_dir.copy()

    off_side = (x < 0) | (x > SIZE - 1)
    x = np.clip(x, 0, SIZE - 1)
    direction = np.where(off_side, OFF_SIDE_WALL[direction], direction)

    # The cases below are exclusive, in the reference's order: ceiling, brick, paddle row.
    above = y < 0
    y = np.maximum(y, 0)
    # A lost ball rests on the bottom row heading down: its next row is off the map, and
    # only a live env's lookup counts.
    hit = live & ~above & (bricks[rows, np.minimum(y, SIZE - 1), x] == 1)
    breaks = hit & ~strike
    bricks[rows[breaks], y[breaks], x[breaks]] = 0
    at_bottom = live & ~above & ~hit & (y == SIZE - 1)

    # The board is laid again as the ball comes down to the paddle's row with no brick left
    # (even if the paddle then misses it).
    refill = at_bottom & ~bricks.reshape(len(rows), -1).any(axis=1)
    bricks[refill, BRICK_ROWS, :] = 1

    # The paddle's column is checked against where the ball was, then where it goes.
    square = at_bottom & (ball_x == new_pos)
    edge = at_bottom & ~square & (x == new_pos)
    lost = at_bottom & ~square & ~edge

    direction = np.where(above | breaks | square, OFF_CEILING[direction], direction)
    direction = np.where(edge, OFF_PADDLE_EDGE[direction], direction)
    y = np.where(breaks | square | edge, ball_y, y)

    reward = breaks.astype(np.float64)
    return (
        np.where(live, x, ball_x),
        np.where(live, y, ball_y),
        np.where(live, direction, ball_dir),
        new_pos,
        bricks,
        np.where(live, hit, strike),
        np.where(live, ball_x, last_x),
        np.where(live, ball_y, last_y),
        terminal | lost,
        reward,
    )
