"""L1 probes for the NumPy MinAtar SpaceInvaders port's module functions (harness code, not
generated).

`call` runs in the worker with the port module, on a batch of one; `expect` reads one
reference transition. The observation is MinAtar's [row][column][channel] planes.
"""

import numpy as np

from envport.verifiers.probes import probe

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
