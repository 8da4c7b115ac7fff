"""L1 probes for the NumPy MinAtar Breakout port's module functions (harness code, not
generated).

`call` runs in the worker with the port module, on a batch of one; `expect` reads one
reference transition. The observation is MinAtar's [row][column][channel] planes.
"""

import numpy as np

from envport.verifiers.draws.probes import probe

INTS = ("ball_x", "ball_y", "ball_dir", "pos")
AFTER = ("ball_x", "ball_y", "ball_dir", "pos", "brick_map", "strike", "last_x", "last_y")


def _one(state, name, dtype=np.int64):
    return np.asarray(state[name], dtype=dtype)[None]


@probe("rules.transition")
def transition(module, before, action, after):
    outputs = module.transition(
        *(_one(before, name) for name in INTS),
        _one(before, "brick_map").reshape(1, 10, 10),
        _one(before, "strike", bool),
        _one(before, "last_x"),
        _one(before, "last_y"),
        _one(before, "terminal", bool),
        np.asarray([action]),
    )
    names = (*AFTER, "terminal", "reward")
    return {name: value[0] for name, value in zip(names, outputs, strict=True)}


@transition.expect
def _(before, action, after, transition):
    return {
        **{name: after[name] for name in AFTER},
        "terminal": after["terminal"],
        "reward": np.float64(transition.reward),
    }


@probe("rules.move_paddle")
def move_paddle(module, before, action, after):
    # A terminal game ignores the action: the paddle stays where it was.
    moved = module.move_paddle(_one(before, "pos"), np.asarray([action]))[0]
    return {"pos": np.where(np.asarray(before["terminal"], dtype=bool), before["pos"], moved)}


@move_paddle.expect
def _(before, action, after, transition):
    return {"pos": after["pos"]}


@probe("view.observe")
def observe(module, before, action, after):
    obs = module.observe(
        _one(after, "ball_x"),
        _one(after, "ball_y"),
        _one(after, "pos"),
        _one(after, "brick_map").reshape(1, 10, 10),
        _one(after, "last_x"),
        _one(after, "last_y"),
    )
    return {"obs": obs[0]}


@observe.expect
def _(before, action, after, transition):
    return {"obs": transition.obs}
