"""L1 probes for the NumPy MinAtar Freeway port's module functions (harness code, not
generated).

`call` runs in the worker with the port module, on a batch of one, and the step's noise
(recorded from the game's own RandomState); `expect` reads one reference transition. The
observation is MinAtar's [row][column][channel] planes.
"""

import numpy as np

from envport.verifiers.draws.probes import probe

CARS = ("car_x", "car_timer", "car_speed", "car_right")
SCALARS = ("pos", "move_timer", "terminate_timer", "terminal")
AFTER = (*CARS, *SCALARS)


def _one(state, name, dtype=np.int64):
    return np.asarray(state[name], dtype=dtype)[None]


def _lanes(state, name, dtype=np.int64):
    return np.asarray(state[name], dtype=dtype).reshape(1, 8)


@probe("rules.transition")
def transition(module, before, action, after, noise):
    outputs = module.transition(
        _lanes(before, "car_x"),
        _lanes(before, "car_timer"),
        _lanes(before, "car_speed"),
        _lanes(before, "car_right", bool),
        _one(before, "pos"),
        _one(before, "move_timer"),
        _one(before, "terminate_timer"),
        _one(before, "terminal", bool),
        np.asarray([action]),
        np.asarray(noise).reshape(1, 8),
    )
    names = (*AFTER, "reward")
    return {name: value[0] for name, value in zip(names, outputs, strict=True)}


@transition.expect
def _(before, action, after, transition):
    return {**{name: after[name] for name in AFTER}, "reward": np.float64(transition.reward)}


@probe("rules.move_chicken")
def move_chicken(module, before, action, after, noise):
    pos, timer = module.move_chicken(_one(before, "pos"), _one(before, "move_timer"), [action])
    # The frame's end counts the timer down once.
    return {"pos": pos[0], "move_timer": np.maximum(timer[0] - 1, 0)}


@move_chicken.arrange
def _(state, action, pick):
    # Where nothing but the move changes the chicken's row: a live game, every car at the
    # left edge (one move takes it to column 1 or 9, never the chicken's 4), the chicken
    # two rows or more from the top (no crossing this frame).
    return {
        **state,
        "car_x": np.zeros(8, dtype=np.int64),
        "pos": np.int64(pick(2, 9)),
        "terminal": np.bool_(False),
    }, action


@move_chicken.expect
def _(before, action, after, transition):
    return {"pos": after["pos"], "move_timer": after["move_timer"]}


@probe("view.observe")
def observe(module, before, action, after, noise):
    obs = module.observe(
        _lanes(after, "car_x"),
        _lanes(after, "car_speed"),
        _lanes(after, "car_right", bool),
        _one(after, "pos"),
    )
    return {"obs": obs[0]}


@observe.expect
def _(before, action, after, transition):
    return {"obs": transition.obs}
