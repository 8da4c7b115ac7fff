"""MinAtar Breakout's step for one env, in JAX (hand-written known-good port; the harness
vmaps it).

The ball moves one cell diagonally per step. It bounces off the side walls and the ceiling,
breaks the first brick it runs into (at most one per two steps: `strike` remembers the hit
of the step before), and on reaching the paddle's row either bounces off the paddle or is
lost. When it reaches that row with no brick left, the three brick rows are laid again.
"""

import jax.numpy as jnp

SIZE = 10
# The wrapper's minimal action set maps an action index to the game's code: no-op 0, left
# 1, right 3. It is a Python list lookup, so -1..-3 pick from the end, as jnp's indexing does.
ACTION_SET = jnp.array([0, 1, 3], dtype=jnp.int32)
GAME_LEFT, GAME_RIGHT = 1, 3
# Ball directions: 0 up-left, 1 up-right, 2 down-right, 3 down-left.
STEP_X = jnp.array([-1, 1, 1, -1], dtype=jnp.int32)
STEP_Y = jnp.array([-1, -1, 1, 1], dtype=jnp.int32)
OFF_SIDE_WALL = jnp.array([1, 0, 3, 2], dtype=jnp.int32)  # horizontal component reversed
OFF_CEILING = jnp.array([3, 2, 1, 0], dtype=jnp.int32)  # vertical reversed (bricks, paddle top)
OFF_PADDLE_EDGE = jnp.array([2, 3, 0, 1], dtype=jnp.int32)  # both: back the way it came
BRICK_ROWS = (jnp.arange(SIZE) >= 1) & (jnp.arange(SIZE) <= 3)


def move_paddle(pos, action):
    """One column left or right, stopping at the screen's edges."""
    code = ACTION_SET[action]
    step = jnp.where(code == GAME_LEFT, -1, jnp.where(code == GAME_RIGHT, 1, 0))
    return jnp.clip(pos + step, 0, SIZE - 1)


def transition(ball_x, ball_y, ball_dir, pos, brick_map, strike, last_x, last_y, terminal, action):
    """One step. Returns (ball_x, ball_y, ball_dir, pos, brick_map, strike, last_x, last_y,
    terminal, reward float32); a terminal env is left as it is, with reward 0."""
    live = ~terminal
    new_pos = jnp.where(live, move_paddle(pos, action), pos)

    x = ball_x + STEP_X[ball_dir]
    y = ball_y + STEP_Y[ball_dir]
    off_side = (x < 0) | (x > SIZE - 1)
    x = jnp.clip(x, 0, SIZE - 1)
    direction = jnp.where(off_side, OFF_SIDE_WALL[ball_dir], ball_dir)

    # The cases below are exclusive, in the reference's order: ceiling, brick, paddle row.
    above = y < 0
    y = jnp.maximum(y, 0)
    # A lost ball rests on the bottom row heading down: its next row is off the map, and
    # only a live env's lookup counts.
    hit = live & ~above & (brick_map[jnp.minimum(y, SIZE - 1), x] == 1)
    breaks = hit & ~strike
    bricks = jnp.where(breaks, brick_map.at[y, x].set(0), brick_map)
    at_bottom = live & ~above & ~hit & (y == SIZE - 1)

    # The board is laid again as the ball comes down to the paddle's row with no brick left
    # (even if the paddle then misses it).
    refill = at_bottom & ~jnp.any(bricks != 0)
    bricks = jnp.where(refill & BRICK_ROWS[:, None], 1, bricks)

    # The paddle's column is checked against where the ball was, then where it goes.
    square = at_bottom & (ball_x == new_pos)
    edge = at_bottom & ~square & (x == new_pos)
    lost = at_bottom & ~square & ~edge

    direction = jnp.where(above | breaks | square, OFF_CEILING[direction], direction)
    direction = jnp.where(edge, OFF_PADDLE_EDGE[direction], direction)
    y = jnp.where(breaks | square | edge, ball_y, y)

    return (
        jnp.where(live, x, ball_x),
        jnp.where(live, y, ball_y),
        jnp.where(live, direction, ball_dir),
        new_pos,
        bricks,
        jnp.where(live, hit, strike),
        jnp.where(live, ball_x, last_x),
        jnp.where(live, ball_y, last_y),
        terminal | lost,
        breaks.astype(jnp.float32),
    )
