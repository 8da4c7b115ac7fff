"""MinAtar SpaceInvaders' step for B envs at once (hand-written known-good port).

Order of one step, as the game applies it: the cannon fires (if reloaded) or moves; the
cannon's bullets rise a row and the aliens' bullets fall a row (both leave at the screen's
edge); an alien bullet or an alien on the cannon's cell ends the game; when their timer is
up the aliens march one column, or drop a row and turn round at a side wall; the alien
nearest the cannon fires when its timer is up; a bullet on an alien kills both (+1 each);
the timers count down; and a cleared screen brings the next wave, faster while the ramp
lasts.
"""

import numpy as np

SIZE = 10
# The wrapper's minimal action set maps an action index to the game's code (n, l, u, r, d,
# f): no-op 0, left 1, right 3, fire 5.
ACTION_SET = np.array([0, 1, 3, 5])
GAME_LEFT, GAME_RIGHT, GAME_FIRE = 1, 3, 5
SHOT_COOL_DOWN = 5
ALIEN_SHOT_INTERVAL = 10
# The ramp speeds each new wave up by one step per march, down to a march every 6 steps.
FASTEST_MOVE_INTERVAL = 6
WAVE_ROWS, WAVE_COLUMNS = slice(0, 4), slice(2, 8)
FIELDS = (
    "pos",
    "alien_map",
    "f_bullet_map",
    "e_bullet_map",
    "alien_dir",
    "enemy_move_interval",
    "alien_move_timer",
    "alien_shot_timer",
    "shot_timer",
    "ramp_index",
    "terminal",
)


def move_cannon(pos, shot_timer, actions):
    """-> (pos int[B], fired bool[B]): fire only once reloaded (a fire while reloading does
    nothing); left and right one column, stopping at the screen's edges."""
    code = ACTION_SET[actions]
    fired = (code == GAME_FIRE) & (shot_timer == 0)
    step = np.where(code == GAME_LEFT, -1, np.where(code == GAME_RIGHT, 1, 0))
    return np.clip(pos + step, 0, SIZE - 1), fired


def shift_rows(maps, by):
    """int[B, 10, 10] moved `by` (-1 up, +1 down) rows; what passes the edge is gone."""
    shifted = np.zeros_like(maps)
    if by < 0:
        shifted[:, :-1] = maps[:, 1:]
    else:
        shifted[:, 1:] = maps[:, :-1]
    return shifted


def march(alien_map, alien_dir):
    """-> (alien_map, alien_dir, dropped bool[B]): one column in their direction, or, with an
    alien at the wall they head for, one row down and the direction reversed. The drop is
    a roll: aliens on the bottom row come back on top (the game is over by then)."""
    at_wall = (alien_map[:, :, 0].any(axis=1) & (alien_dir < 0)) | (
        alien_map[:, :, SIZE - 1].any(axis=1) & (alien_dir > 0)
    )
    down = np.roll(alien_map, 1, axis=1)
    left, right = np.roll(alien_map, -1, axis=2), np.roll(alien_map, 1, axis=2)
    sideways = np.where(
        (alien_dir < 0)[:, None, None],
        left,
        np.where((alien_dir > 0)[:, None, None], right, alien_map),
    )
    moved = np.where(at_wall[:, None, None], down, sideways)
    return moved, np.where(at_wall, -alien_dir, alien_dir), at_wall


def nearest_alien(alien_map, pos):
    """-> (row, column) int[B] of the alien that fires: in the column closest to the cannon
    (the lower column on a tie), the lowest alien there. Meaningless with no alien left."""
    columns = np.arange(SIZE)
    occupied = alien_map.any(axis=1)
    rank = np.abs(columns[None, :] - pos[:, None]) * SIZE + columns[None, :]
    column = np.argmin(np.where(occupied, rank, SIZE * SIZE), axis=1)
    rows = np.arange(len(pos))
    in_column = alien_map[rows, :, column] == 1
    row = SIZE - 1 - np.argmax(in_column[:, ::-1], axis=1)
    return row, column


def transition(state, actions):
    """One step of every env: (dict of [B, ...] arrays, actions int[B]) -> (the next dict,
    reward float64[B]); the input is not modified. A terminal env is left as it is, with
    reward 0."""
    live = ~state["terminal"]
    rows = np.arange(len(live))
    pos, fired = move_cannon(state["pos"], state["shot_timer"], actions)
    fired &= live
    pos = np.where(live, pos, state["pos"])
    shot_timer = np.where(fired, SHOT_COOL_DOWN, state["shot_timer"])

    f_bullets = state["f_bullet_map"].copy()
    f_bullets[rows[fired], SIZE - 1, pos[fired]] = 1
    f_bullets = shift_rows(f_bullets, -1)
    e_bullets = shift_rows(state["e_bullet_map"], 1)
    aliens = state["alien_map"]
    hit = (e_bullets[rows, SIZE - 1, pos] != 0) | (aliens[rows, SIZE - 1, pos] != 0)

    # The march: its timer restarts at the interval, or at the number of aliens left when
    # fewer (the last few aliens speed up).
    marching = live & (state["alien_move_timer"] == 0)
    count = np.count_nonzero(aliens.reshape(len(rows), -1), axis=1)
    move_timer = np.where(
        marching,
        np.minimum(count, state["enemy_move_interval"]),
        state["alien_move_timer"],
    )
    marched, turned_dir, dropped = march(aliens, state["alien_dir"])
    alien_dir = np.where(marching, turned_dir, state["alien_dir"])
    hit |= marching & dropped & aliens[:, SIZE - 1, :].any(axis=1)
    aliens = np.where(marching[:, None, None], marched, aliens)
    hit |= marching & (aliens[rows, SIZE - 1, pos] != 0)

    shooting = live & (state["alien_shot_timer"] == 0) & aliens.reshape(len(rows), -1).any(axis=1)
    shot_row, shot_column = nearest_alien(aliens, pos)
    e_bullets[rows[shooting], shot_row[shooting], shot_column[shooting]] = 1
    alien_shot_timer = np.where(
        live & (state["alien_shot_timer"] == 0), ALIEN_SHOT_INTERVAL, state["alien_shot_timer"]
    )

    kills = live[:, None, None] & (aliens != 0) & (aliens == f_bullets)
    reward = kills.reshape(len(rows), -1).sum(axis=1).astype(np.float64)
    aliens = np.where(kills, 0, aliens)
    f_bullets = np.where(kills, 0, f_bullets)

    cleared = live & ~aliens.reshape(len(rows), -1).any(axis=1)
    faster = cleared & (state["enemy_move_interval"] > FASTEST_MOVE_INTERVAL)
    aliens[rows[cleared], WAVE_ROWS, WAVE_COLUMNS] = 1

    def kept(new, old):
        return np.where(live.reshape((-1,) + (1,) * (np.ndim(old) - 1)), new, old)

    after = {
        "pos": pos,
        "alien_map": kept(aliens, state["alien_map"]),
        "f_bullet_map": kept(f_bullets, state["f_bullet_map"]),
        "e_bullet_map": kept(e_bullets, state["e_bullet_map"]),
        "alien_dir": alien_dir,
        "enemy_move_interval": state["enemy_move_interval"] - faster,
        "alien_move_timer": kept(move_timer - 1, move_timer),
        "alien_shot_timer": kept(alien_shot_timer - 1, alien_shot_timer),
        "shot_timer": kept(shot_timer - (shot_timer > 0), shot_timer),
        "ramp_index": state["ramp_index"] + faster,
        "terminal": state["terminal"] | (live & hit),
    }
    return after, reward
