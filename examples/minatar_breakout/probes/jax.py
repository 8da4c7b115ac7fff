"""L1 probes for the JAX MinAtar Breakout port's module functions (harness code, not
generated).

`call` runs in the worker with the port module; `expect` reads one reference transition.
The observation is MinAtar's [row][column][channel] planes.
"""

import numpy as np

from envport.verifiers.draws.probes import probe

INTS = ("ball_x", "ball_y", "ball_dir", "pos")
AFTER = ("ball_x", "ball_y", "ball_dir", "pos", "brick_map", "strike", "last_x", "last_y")


def _one(jnp, state, name, dtype=None):
    return jnp.asarray(state[name], dtype or jnp.int32)


@probe("rules.transition")
def transition(module, before, action, after):
    import jax.numpy as jnp

    outputs = module.transition(
        *(_one(jnp, before, name) for name in INTS),
        _one(jnp, before, "brick_map").reshape(10, 10),
        _one(jnp, before, "strike", bool),
        _one(jnp, before, "last_x"),
        _one(jnp, before, "last_y"),
        _one(jnp, before, "terminal", bool),
        jnp.asarray(action, jnp.int32),
    )
    names = (*AFTER, "terminal", "reward")
    return dict(zip(names, outputs, strict=True))


@transition.expect
def _(before, action, after, transition):
    return {
        **{name: after[name] for name in AFTER},
        "terminal": after["terminal"],
        "reward": np.float64(transition.reward),
    }


@probe("rules.move_paddle")
def move_paddle(module, before, action, after):
    import jax.numpy as jnp

    # A terminal game ignores the action: the paddle stays where it was.
    moved = module.move_paddle(_one(jnp, before, "pos"), jnp.asarray(action, jnp.int32))
    return {"pos": jnp.where(_one(jnp, before, "terminal", bool), _one(jnp, before, "pos"), moved)}


@move_paddle.expect
def _(before, action, after, transition):
    return {"pos": after["pos"]}


@probe("view.observe")
def observe(module, before, action, after):
    import jax.numpy as jnp

    obs = module.observe(
        _one(jnp, after, "ball_x"),
        _one(jnp, after, "ball_y"),
        _one(jnp, after, "pos"),
        _one(jnp, after, "brick_map").reshape(10, 10),
        _one(jnp, after, "last_x"),
        _one(jnp, after, "last_y"),
    )
    return {"obs": obs}


@observe.expect
def _(before, action, after, transition):
    return {"obs": transition.obs}
