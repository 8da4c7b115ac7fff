"""MinAtar Breakout as the harness sees it (harness code, beside the spec).

`make` builds MinAtar's own Gymnasium env (`MinAtar/Breakout-v1`, the minimal action set
no-op, left, right) with sticky actions off; `read_state` and `write_state` bridge the
game's attributes (`env.unwrapped.game.env`, minatar.environments.breakout.Env) into
fixed-shape integer arrays and back.

State (the game's own attribute names):
    ball_x, ball_y   int64        the ball's column and row (row 0 the top, 9 the paddle's)
    ball_dir         int64        0 up-left, 1 up-right, 2 down-right, 3 down-left
    pos              int64        the paddle's column, on row 9
    brick_map        int64[10, 10] 1 where a brick is ([row][column]); the game keeps floats
    strike           bool         a brick was hit last step (no second brick this step)
    last_x, last_y   int64        where the ball was one step ago (the observation's trail)
    terminal         bool         the ball went past the paddle; `act` does nothing more

The wrapper's `last_action` (sticky actions' memory) is left out: with sticky actions off
it never changes an outcome.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from minatar.gym import register_envs

INTS = ("ball_x", "ball_y", "ball_dir", "pos", "last_x", "last_y")
BOOLS = ("strike", "terminal")


def make(id: str = "MinAtar/Breakout-v1", **kwargs: Any) -> gymnasium.Env:
    # MinAtar registers its ids through a `gymnasium.envs` entry point that Gymnasium 1.x
    # no longer loads by itself: registering here is what `gym.make` needs.
    if id not in gymnasium.registry:
        register_envs()
    return gymnasium.make(id, **kwargs)


def _game(env: gymnasium.Env) -> Any:
    return env.unwrapped.game.env  # type: ignore[attr-defined]


def read_state(env: gymnasium.Env) -> dict[str, Any]:
    game = _game(env)
    state: dict[str, Any] = {name: np.int64(getattr(game, name)) for name in INTS}
    state.update({name: np.bool_(getattr(game, name)) for name in BOOLS})
    state["brick_map"] = np.asarray(game.brick_map).astype(np.int64)
    return state


def write_state(env: gymnasium.Env, state: dict[str, Any]) -> None:
    game = _game(env)
    for name in INTS:
        setattr(game, name, int(state[name]))
    for name in BOOLS:
        setattr(game, name, bool(state[name]))
    # A drawn map arrives flat (bounds are one value per component); the game keeps floats.
    game.brick_map = np.asarray(state["brick_map"], dtype=np.float64).reshape(10, 10)
