"""MinAtar Freeway's rules for one env, jax-traceable: the chicken's move, the crossing, the
traffic (hand-written known-good port).

Rows run 0 (the top, the far side) to 9 (the bottom, where the chicken starts); the chicken
is always in column 4 and lane i's car drives on row i + 1. Lane arrays are [8].
"""

import jax.numpy as jnp

SIZE = 10
LANES = 8
CHICKEN_COLUMN = 4
BOTTOM = SIZE - 1
# The chicken may move once every this many frames.
MOVE_DELAY = 3
LANE_ROWS = jnp.arange(1, LANES + 1, dtype=jnp.int32)
NOOP, UP, DOWN = 0, 1, 2
# The wrapper looks an action up in its minimal action set, a Python list, so -1..-3 count
# from its end; `jnp.take` with mode="wrap" does the same for them.
ACTION_SET = jnp.array([NOOP, UP, DOWN], dtype=jnp.int32)
SPEEDS = 5


def speeds_from_noise(noise):
    """noise int[8] in 0..9 -> (car_speed 1..5, car_right bool): value % 5 + 1, and the
    upper half drives right."""
    noise = jnp.asarray(noise, dtype=jnp.int32)
    return noise % SPEEDS + 1, noise >= SPEEDS


def move_chicken(pos, move_timer, action):
    """-> (pos, move_timer): up or down one row (kept on the screen) when the timer is 0,
    which then restarts at MOVE_DELAY; a no-op, or a move while waiting, changes nothing."""
    code = jnp.take(ACTION_SET, jnp.asarray(action, dtype=jnp.int32), mode="wrap")
    ready = move_timer == 0
    up = ready & (code == UP)
    down = ready & (code == DOWN)
    new_pos = jnp.where(
        up, jnp.maximum(pos - 1, 0), jnp.where(down, jnp.minimum(pos + 1, BOTTOM), pos)
    )
    return new_pos, jnp.where(up | down, MOVE_DELAY, move_timer)


def drive_cars(car_x, car_timer, car_speed, car_right):
    """-> (car_x, car_timer, moved bool[8]): a car whose timer is 0 moves one column its way
    (leaving one side it comes in on the other) and waits car_speed frames again; the
    others count down."""
    moved = car_timer == 0
    new_x = jnp.where(moved, (car_x + jnp.where(car_right, 1, -1)) % SIZE, car_x)
    return new_x, jnp.where(moved, car_speed, car_timer - 1), moved


def transition(
    car_x,
    car_timer,
    car_speed,
    car_right,
    pos,
    move_timer,
    terminate_timer,
    terminal,
    action,
    noise,
):
    """One frame, Env.act with the minimal action set, given the lanes' new speeds (used only
    when the chicken crosses); a terminal env unchanged with reward 0.
    -> (car_x, car_timer, car_speed, car_right, pos, move_timer, terminate_timer, terminal,
    reward float32)."""
    new_pos, new_move_timer = move_chicken(pos, move_timer, action)
    # Reaching the top scores, sends the chicken back to the bottom and gives every lane a
    # new speed and direction (its timer restarts at the new speed; columns stay).
    crossed = new_pos == 0
    drawn_speed, drawn_right = speeds_from_noise(noise)
    speed = jnp.where(crossed, drawn_speed, car_speed)
    right = jnp.where(crossed, drawn_right, car_right)
    timer = jnp.where(crossed, drawn_speed, car_timer)
    new_pos = jnp.where(crossed, BOTTOM, new_pos)
    # A car in the chicken's column on its row, before or after the car's move, knocks it
    # back to the bottom (once there no lane can hit it).
    in_lane = new_pos == LANE_ROWS
    hit_before = in_lane & (car_x == CHICKEN_COLUMN)
    new_x, new_timer, moved = drive_cars(car_x, timer, speed, right)
    hit_after = in_lane & moved & (new_x == CHICKEN_COLUMN)
    new_pos = jnp.where(jnp.any(hit_before | hit_after), BOTTOM, new_pos)
    new_move_timer = new_move_timer - (new_move_timer > 0)
    new_terminate = terminate_timer - 1
    live = ~terminal
    return (
        jnp.where(live, new_x, car_x),
        jnp.where(live, new_timer, car_timer),
        jnp.where(live, speed, car_speed),
        jnp.where(live, right, car_right),
        jnp.where(live, new_pos, pos),
        jnp.where(live, new_move_timer, move_timer),
        jnp.where(live, new_terminate, terminate_timer),
        jnp.where(live, new_terminate < 0, terminal),
        jnp.where(live & crossed, 1.0, 0.0).astype(jnp.float32),
    )
