"""L1 probes for the JAX MinAtar SpaceInvaders port's module functions (harness code, not
generated).

`call` runs in the worker with the port module; `expect` reads one reference transition.
The observation is MinAtar's [row][column][channel] planes.
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


def _one(state):
    """One reference state as the port's dict of jax arrays."""
    import jax.numpy as jnp

    one = {name: jnp.asarray(state[name], jnp.int32) for name in INTS}
    one.update({name: jnp.asarray(state[name], jnp.int32).reshape(10, 10) for name in MAPS})
    one["terminal"] = jnp.asarray(state["terminal"], bool)
    return one


@probe("rules.transition")
def transition(module, before, action, after):
    import jax.numpy as jnp

    state, reward = module.transition(_one(before), jnp.asarray(action, jnp.int32))
    return {**state, "reward": reward}


@transition.expect
def _(before, action, after, transition):
    return {
        **{name: after[name] for name in (*INTS, *MAPS)},
        "terminal": after["terminal"],
        "reward": np.float64(transition.reward),
    }


@probe("rules.move_cannon")
def move_cannon(module, before, action, after):
    import jax.numpy as jnp

    # A terminal game ignores the action: the cannon stays where it was.
    pos, _ = module.move_cannon(
        jnp.asarray(before["pos"], jnp.int32),
        jnp.asarray(before["shot_timer"], jnp.int32),
        jnp.asarray(action, jnp.int32),
    )
    stays = jnp.asarray(before["terminal"], bool)
    return {"pos": jnp.where(stays, jnp.asarray(before["pos"], jnp.int32), pos)}


@move_cannon.expect
def _(before, action, after, transition):
    return {"pos": after["pos"]}


@probe("rules.nearest_alien")
def nearest_alien(module, before, action, after):
    # The alien that fires on the next step, from the state after this one; no alien is
    # checked where the reference would not fire (no alien left).
    import jax.numpy as jnp

    aliens = jnp.asarray(after["alien_map"], jnp.int32).reshape(10, 10)
    row, column = module.nearest_alien(aliens, jnp.asarray(after["pos"], jnp.int32))
    found = jnp.any(aliens != 0)
    return {"row": jnp.where(found, row, -1), "column": jnp.where(found, column, -1)}


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
    state = _one(after)
    obs = module.observe(
        state["pos"],
        state["alien_map"],
        state["f_bullet_map"],
        state["e_bullet_map"],
        state["alien_dir"],
    )
    return {"obs": obs}


@observe.expect
def _(before, action, after, transition):
    return {"obs": transition.obs}
