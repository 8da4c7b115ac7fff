"""MinAtar Freeway as the harness sees it (harness code, beside the spec).

`make` builds MinAtar's own Gymnasium env (`MinAtar/Freeway-v1`, the minimal action set
no-op, up, down) with sticky actions off; `read_state` and `write_state` bridge the game's
attributes (`env.unwrapped.game.env`, minatar.environments.freeway.Env) into fixed-shape
integer arrays and back.

The game keeps its eight cars as a Python list of `[x, y, timer, speed]`, car i always on
row i + 1 (nothing moves a car off its lane), so the bridge carries the lanes' columns
(`car_x`), timers (`car_timer`, frames until the car moves next) and velocities split in
two: `car_speed` 1..5 (the car moves once every `car_speed` frames) and `car_right` (it
drives right, x rising). The game's signed speed is `car_speed` with `car_right`'s sign;
splitting it keeps a drawn state away from speed 0, which the game never makes (its
observation has no trail channel for it).

Other state (the game's own names): pos (the chicken's row, 9 the bottom, always in
column 4), move_timer (frames until it may move again), terminate_timer (frames left; the
episode ends when it goes below 0) and terminal.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from minatar.gym import register_envs

CARS = 8
SCALARS = ("pos", "move_timer", "terminate_timer")


def make(id: str = "MinAtar/Freeway-v1", **kwargs: Any) -> gymnasium.Env:
    # MinAtar registers its ids through a `gymnasium.envs` entry point that Gymnasium 1.x
    # no longer loads by itself: registering here is what `gym.make` needs.
    if id not in gymnasium.registry:
        register_envs()
    return gymnasium.make(id, **kwargs)


def _game(env: gymnasium.Env) -> Any:
    return env.unwrapped.game.env  # type: ignore[attr-defined]


def read_state(env: gymnasium.Env) -> dict[str, Any]:
    game = _game(env)
    cars = np.asarray(game.cars, dtype=np.int64).reshape(CARS, 4)
    state: dict[str, Any] = {name: np.int64(getattr(game, name)) for name in SCALARS}
    state["terminal"] = np.bool_(game.terminal)
    state["car_x"] = cars[:, 0].copy()
    state["car_timer"] = cars[:, 2].copy()
    state["car_speed"] = np.abs(cars[:, 3])
    state["car_right"] = cars[:, 3] > 0
    return state


def write_state(env: gymnasium.Env, state: dict[str, Any]) -> None:
    game = _game(env)
    for name in SCALARS:
        setattr(game, name, int(state[name]))
    game.terminal = bool(state["terminal"])
    x, timer, speed, right = (
        np.asarray(state[name]).reshape(CARS)
        for name in ("car_x", "car_timer", "car_speed", "car_right")
    )
    # The game's own shape: a list of Python int lists, compared with `car[0:2] == [4, pos]`.
    game.cars = [
        [int(x[i]), i + 1, int(timer[i]), int(speed[i]) if right[i] else -int(speed[i])]
        for i in range(CARS)
    ]
