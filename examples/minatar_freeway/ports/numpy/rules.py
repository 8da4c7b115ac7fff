"""MinAtar Freeway's rules on a batch: the chicken's move, the crossing, the traffic.

Rows run 0 (the top, the far side) to 9 (the bottom, where the chicken starts); the chicken
is always in column 4 and lane i's car drives on row i + 1. All arrays are [B] or [B, 8].
"""

import numpy as np

SIZE = 10
LANES = 8
CHICKEN_COLUMN = 4
BOTTOM = SIZE - 1
# The chicken may move once every this many frames.
MOVE_DELAY = 3
LANE_ROWS = np.arange(1, LANES + 1)
NOOP, UP, DOWN = 0, 1, 2
# The wrapper looks an action up in its minimal action set, a Python list, so -1..-3 are
# accepted and count from its end (-1 down, -2 up, -3 no-op); indexing this array does the same.
ACTION_SET = np.array([NOOP, UP, DOWN])
SPEEDS = 5


def speeds_from_noise(noise):
    """noise int[B, 8] in 0..9 -> (car_speed 1..5, car_right bool): value % 5 + 1, and the
    upper half drives right."""
    noise = np.asarray(noise, dtype=np.int64)
    return noise % SPEEDS + 1, noise >= SPEEDS


def move_chicken(pos, move_timer, actions):
    """-> (pos, move_timer): up or down one row (kept on the screen) when the timer is 0,
    which then restarts at MOVE_DELAY; a no-op, or a move while waiting, changes nothing."""
    actions = ACTION_SET[np.asarray(actions)]
    ready = move_timer == 0
    up = ready & (actions == UP)
    down = ready & (actions == DOWN)
    new_pos = np.where(up, np.maximum(pos - 1, 0), np.where(down, np.minimum(pos + 1, BOTTOM), pos))
    new_timer = np.where(up | down, MOVE_DELAY, move_timer)
    return new_pos, new_timer


def drive_cars(car_x, car_timer, car_speed, car_right):
    """-> (car_x, car_timer, moved bool[B, 8]): a car whose timer is 0 moves one column its
    way (leaving one side it comes in on the other) and waits car_speed frames again; the
    others count down."""
    moved = car_timer == 0
    step = np.where(car_right, 1, -1)
    new_x = np.where(moved, (car_x + step) % SIZE, car_x)
    new_timer = np.where(moved, car_speed, car_timer - 1)
    return new_x, new_timer, moved


def transition(
    car_x,
    car_timer,
    car_speed,
    car_right,
    pos,
    move_timer,
    terminate_timer,
    terminal,
    actions,
    noise,
):
    """One frame, Env.act with the minimal action set, given the lanes' new speeds (used only
    when the chicken crosses). Inputs unmodified; a terminal env unchanged with reward 0.
    -> (car_x, car_timer, car_speed, car_right, pos, move_timer, terminate_timer, terminal,
    reward float64[B])."""
    live = ~np.asarray(terminal, dtype=bool)
    new_pos, new_move_timer = move_chicken(pos, move_timer, actions)
    # Reaching the top scores, sends the chicken back to the bottom and gives every lane a
    # new speed and direction (its timer restarts at the new speed; columns stay).
    crossed = new_pos == 0
    drawn_speed, drawn_right = speeds_from_noise(noise)
    speed = np.where(crossed[:, None], drawn_speed, car_speed)
    right = np.where(crossed[:, None], drawn_right, car_right)
    timer = np.where(crossed[:, None], drawn_speed, car_timer)
    new_pos = np.where(crossed, BOTTOM, new_pos)
    # A car in the chicken's column on its row, before or after the car's move, knocks it
    # back to the bottom (once there no lane can hit it).
    in_lane = LANE_ROWS[None, :] == new_pos[:, None]
    hit_before = in_lane & (car_x == CHICKEN_COLUMN)
    new_x, new_timer, moved = drive_cars(car_x, timer, speed, right)
    hit_after = in_lane & moved & (new_x == CHICKEN_COLUMN)
    new_pos = np.where((hit_before | hit_after).any(axis=1), BOTTOM, new_pos)
    new_move_timer = new_move_timer - (new_move_timer > 0)
    new_terminate = terminate_timer - 1
    ended = new_terminate < 0

    def keep(new, old):
        mask = live.reshape(live.shape + (1,) * (np.ndim(new) - 1))
        return np.where(mask, new, old)

    return (
        keep(new_x, car_x),
        keep(new_timer, car_timer),
        keep(speed, car_speed),
        keep(right, car_right),
        keep(new_pos, pos),
        keep(new_move_timer, move_timer),
        keep(new_terminate, terminate_timer),
        keep(ended, terminal),
        np.where(live & crossed, 1.0, 0.0),
    )
