"""L1 probes for the NumPy MinAtar SpaceInvaders port's module functions (harness code, not
generated).

`call` runs in the worker with the port module, on a batch of one; `expect` reads one
reference transition. The observation is MinAtar's [row][column][channel] planes.
"""

import numpy as np

from envport.verifiers.draws.probes import probe

MAPS = ("alien_map", "f_bullet_map", "e_bullet_map")
INTS = (
    "pos",
    "alien_dir",
    "enemy_move_interval",
    "alien_move_timer",
    "alien_shot_timer",
    "shot_timer",
    "ramp_index",
)


def _batch(state):
    """One reference state as the port's batch of one."""
    batch = {name: np.asarray(state[name], dtype=np.int64)[None] for name in INTS}
    batch.update(
        {name: np.asarray(state[name], dtype=np.int64).reshape(1, 10, 10) for name in MAPS}
    )
    batch["terminal"] = np.asarray(state["terminal"], dtype=bool)[None]
    return batch


@probe("rules.transition")
def transition(module, before, action, after):
    state, reward = module.transition(_batch(before), np.asarray([action]))
    return {**{name: value[0] for name, value in state.items()}, "reward": reward[0]}


@transition.expect
def _(before, action, after, transition):
    return {
        **{name: after[name] for name in (*INTS, *MAPS)},
        "terminal": after["terminal"],
        "reward": np.float64(transition.reward),
    }


@probe("rules.move_cannon")
def move_cannon(module, before, action, after):
    # A terminal game ignores the action: the cannon stays where it was.
    pos, _ = module.move_cannon(
        np.asarray([before["pos"]]), np.asarray([before["shot_timer"]]), np.asarray([action])
    )
    return {"pos": np.where(np.asarray(before["terminal"], dtype=bool), before["pos"], pos[0])}


@move_cannon.expect
def _(before, action, after, transition):
    return {"pos": after["pos"]}


@probe("rules.nearest_alien")
def nearest_alien(module, before, action, after):
    # The alien that fires on the next step, from the state after this one; no alien is
    # checked where the reference would not fire (no alien left).
    aliens = np.asarray(after["alien_map"], dtype=np.int64).reshape(1, 10, 10)
    row, column = module.nearest_alien(aliens, np.asarray([after["pos"]]))
    found = aliens.any()
    return {"row": row[0] if found else -1, "column": column[0] if found else -1}


@nearest_alien.expect
def _(before, action, after, transition):
    aliens = np.asarray(after["alien_map"]).reshape(10, 10)
    pos = int(after["pos"])
    for column in sorted(range(10), key=lambda c: abs(c - pos)):
        rows = np.flatnonzero(aliens[:, column])
        if len(rows):
            return {"row": int(rows.max()), "column": column}
    return {"row": -1, "column": -1}


@probe("view.observe")
def observe(module, before, action, after):
    state = _batch(after)
    obs = module.observe(
        state["pos"],
        state["alien_map"],
        state["f_bullet_map"],
        state["e_bullet_map"],
        state["alien_dir"],
    )
    return {"obs": obs[0]}


@observe.expect
def _(before, action, after, transition):
    return {"obs": transition.obs}


# ---- the last alien shot: the difficulty ramp's inputs, arranged ----
# Play never clears a wave (a random episode lasts about 60 steps; l3.explore's steps from
# the states it archives do not clear 24 aliens either), and a uniform draw needs a one-alien
# map with a bullet right under it, so the ramp's rule (a cleared wave lays a new one and,
# above the floor of 6, marches one step sooner) would rest on a few lucky L1 draws. This
# probe runs the transition from drawn states arranged so: one alien above the bottom row,
# the cannon's bullet one row under it (it rises onto the alien this step), no march this
# step (a march would move the alien off the bullet's column), the game live; the march
# interval at the ramp's floor half the time, anywhere in 6..12 otherwise.
def _last_alien_over_a_bullet(state, action, pick):
    row, column = pick(0, 8), pick(0, 9)
    aliens = np.zeros((10, 10), dtype=np.int64)
    aliens[row, column] = 1
    bullets = np.array(state["f_bullet_map"], dtype=np.int64).reshape(10, 10)
    bullets[row + 1, column] = 1
    arranged = {
        **state,
        "alien_map": aliens.reshape(np.shape(state["alien_map"])),
        "f_bullet_map": bullets.reshape(np.shape(state["f_bullet_map"])),
        "alien_move_timer": np.int64(pick(1, 12)),
        "enemy_move_interval": np.int64(6 if pick(0, 1) else pick(6, 12)),
        "terminal": np.bool_(False),
    }
    return arranged, action


last_alien_shot = probe("rules.last_alien_shot")(transition.call)
last_alien_shot.expect(transition.expect_fn)
last_alien_shot.arrange(_last_alien_over_a_bullet)
