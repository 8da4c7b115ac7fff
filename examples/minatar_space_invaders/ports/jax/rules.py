"""MinAtar SpaceInvaders' step for one env, in JAX (hand-written known-good port; the
harness vmaps it).

Order of one step, as the game applies it: the cannon fires (if reloaded) or moves; the
cannon's bullets rise a row and the aliens' bullets fall a row (both leave at the screen's
edge); an alien bullet or an alien on the cannon's cell ends the game; when their timer is
up the aliens march one column, or drop a row and turn round at a side wall; the alien
nearest the cannon fires when its timer is up; a bullet on an alien kills both (+1 each);
the timers count down; and a cleared screen brings the next wave, faster while the ramp
lasts.
"""

import jax.numpy as jnp

SIZE = 10
# The wrapper's minimal action set maps an action index to the game's code (n, l, u, r, d,
# f): no-op 0, left 1, right 3, fire 5.
ACTION_SET = jnp.array([0, 1, 3, 5], dtype=jnp.int32)
GAME_LEFT, GAME_RIGHT, GAME_FIRE = 1, 3, 5
SHOT_COOL_DOWN = 5
ALIEN_SHOT_INTERVAL = 10
# The ramp speeds each new wave up by one step per march, down to a march every 6 steps.
FASTEST_MOVE_INTERVAL = 6
_ROWS = jnp.arange(SIZE)[:, None]
_COLUMNS = jnp.arange(SIZE)[None, :]
WAVE = (_ROWS < 4) & (_COLUMNS >= 2) & (_COLUMNS < 8)  # where each new wave starts


def move_cannon(pos, shot_timer, action):
    """-> (pos, fired bool): fire only once reloaded (a fire while reloading does nothing);
    left and right one column, stopping at the screen's edges."""
    code = ACTION_SET[action]
    fired = (code == GAME_FIRE) & (shot_timer == 0)
    step = jnp.where(code == GAME_LEFT, -1, jnp.where(code == GAME_RIGHT, 1, 0))
    return jnp.clip(pos + step, 0, SIZE - 1), fired


def rise(bullets):
    """One row up; what leaves the top is gone."""
    return jnp.concatenate([bullets[1:], jnp.zeros_like(bullets[:1])], axis=0)


def fall(bullets):
    """One row down; what leaves the bottom is gone."""
    return jnp.concatenate([jnp.zeros_like(bullets[:1]), bullets[:-1]], axis=0)


def march(alien_map, alien_dir):
    """-> (alien_map, alien_dir, dropped bool): one column in their direction, or, with an
    alien at the wall they head for, one row down and the direction reversed. The drop is
    a roll: aliens on the bottom row come back on top (the game is over by then)."""
    at_wall = (jnp.any(alien_map[:, 0] != 0) & (alien_dir < 0)) | (
        jnp.any(alien_map[:, SIZE - 1] != 0) & (alien_dir > 0)
    )
    sideways = jnp.where(
        alien_dir < 0,
        jnp.roll(alien_map, -1, axis=1),
        jnp.where(alien_dir > 0, jnp.roll(alien_map, 1, axis=1), alien_map),
    )
    moved = jnp.where(at_wall, jnp.roll(alien_map, 1, axis=0), sideways)
    return moved, jnp.where(at_wall, -alien_dir, alien_dir), at_wall


def nearest_alien(alien_map, pos):
    """-> (row, column) of the alien that fires: in the column closest to the cannon (the
    lower column on a tie), the lowest alien there. Meaningless with no alien left."""
    columns = jnp.arange(SIZE)
    occupied = jnp.any(alien_map != 0, axis=0)
    rank = jnp.abs(columns - pos) * SIZE + columns
    column = jnp.argmin(jnp.where(occupied, rank, SIZE * SIZE))
    in_column = alien_map[:, column] == 1
    row = jnp.max(jnp.where(in_column, jnp.arange(SIZE), -1))
    return row, column


def transition(state, action):
    """One step: (dict of arrays, action) -> (the next dict, reward float32). A terminal
    env is left as it is, with reward 0; jax-traceable."""
    live = ~state["terminal"]
    moved_pos, fired = move_cannon(state["pos"], state["shot_timer"], action)
    pos = jnp.where(live, moved_pos, state["pos"])
    fired = live & fired
    shot_timer = jnp.where(fired, SHOT_COOL_DOWN, state["shot_timer"])

    f_bullets = state["f_bullet_map"]
    f_bullets = rise(jnp.where(fired, f_bullets.at[SIZE - 1, pos].set(1), f_bullets))
    e_bullets = fall(state["e_bullet_map"])
    aliens = state["alien_map"]
    hit = (e_bullets[SIZE - 1, pos] != 0) | (aliens[SIZE - 1, pos] != 0)

    # The march: its timer restarts at the interval, or at the number of aliens left when
    # fewer (the last few aliens speed up).
    marching = state["alien_move_timer"] == 0
    count = jnp.count_nonzero(aliens).astype(jnp.int32)
    move_timer = jnp.where(
        marching, jnp.minimum(count, state["enemy_move_interval"]), state["alien_move_timer"]
    )
    marched, turned_dir, dropped = march(aliens, state["alien_dir"])
    alien_dir = jnp.where(marching, turned_dir, state["alien_dir"])
    hit |= marching & dropped & jnp.any(aliens[SIZE - 1] != 0)
    aliens = jnp.where(marching, marched, aliens)
    hit |= marching & (aliens[SIZE - 1, pos] != 0)

    reloaded = state["alien_shot_timer"] == 0
    shot_row, shot_column = nearest_alien(aliens, pos)
    shooting = reloaded & jnp.any(aliens != 0)
    e_bullets = jnp.where(shooting, e_bullets.at[shot_row, shot_column].set(1), e_bullets)
    alien_shot_timer = jnp.where(reloaded, ALIEN_SHOT_INTERVAL, state["alien_shot_timer"])

    kills = (aliens != 0) & (aliens == f_bullets)
    reward = jnp.sum(kills).astype(jnp.float32)
    aliens = jnp.where(kills, 0, aliens)
    f_bullets = jnp.where(kills, 0, f_bullets)

    cleared = ~jnp.any(aliens != 0)
    faster = (cleared & (state["enemy_move_interval"] > FASTEST_MOVE_INTERVAL)).astype(jnp.int32)
    aliens = jnp.where(cleared & WAVE, 1, aliens)

    after = {
        "pos": pos,
        "alien_map": aliens,
        "f_bullet_map": f_bullets,
        "e_bullet_map": e_bullets,
        "alien_dir": alien_dir,
        "enemy_move_interval": state["enemy_move_interval"] - faster,
        "alien_move_timer": move_timer - 1,
        "alien_shot_timer": alien_shot_timer - 1,
        "shot_timer": shot_timer - (shot_timer > 0).astype(jnp.int32),
        "ramp_index": state["ramp_index"] + faster,
        "terminal": state["terminal"] | hit,
    }
    # A terminal env does nothing more: everything as it was, reward 0.
    after = {name: jnp.where(live, value, state[name]) for name, value in after.items()}
    return after, jnp.where(live, reward, 0.0)
