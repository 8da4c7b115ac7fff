"""MinAtar SpaceInvaders as the harness sees it (harness code, beside the spec).

`make` builds MinAtar's own Gymnasium env (`MinAtar/SpaceInvaders-v1`, the minimal action
set no-op, left, right, fire) with sticky actions off; `read_state` and `write_state` bridge
the game's attributes (`env.unwrapped.game.env`, minatar.environments.space_invaders.Env)
into fixed-shape integer arrays and back.

State (the game's own attribute names; maps int64[10, 10], [row][column], the rest int64):
    pos                  the cannon's column, on row 9
    alien_map            1 where an alien is (the game keeps floats, as for both bullet maps)
    f_bullet_map         the cannon's bullets, rising one row a step
    e_bullet_map         the aliens' bullets, falling one row a step
    alien_dir            -1 the aliens march left, +1 right
    enemy_move_interval  steps between marches: 12, one less a wave cleared, 6 at least
    alien_move_timer     steps until the aliens next march
    alien_shot_timer     steps until the alien nearest the cannon next fires
    shot_timer           steps until the cannon may fire again
    ramp_index           waves cleared that sped the aliens up (the difficulty ramp)
    terminal             bool: an alien or a bullet reached the cannon; `act` then does nothing

The game's `ramping` flag (MinAtar's default True) is configuration, not state; the
wrapper's `last_action` (sticky actions' memory) is left out: with sticky actions off it
never changes an outcome.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from minatar.gym import register_envs

INTS = (
    "pos",
    "alien_dir",
    "enemy_move_interval",
    "alien_move_timer",
    "alien_shot_timer",
    "shot_timer",
    "ramp_index",
)
MAPS = ("alien_map", "f_bullet_map", "e_bullet_map")


def make(id: str = "MinAtar/SpaceInvaders-v1", **kwargs: Any) -> gymnasium.Env:
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
    state["terminal"] = np.bool_(game.terminal)
    for name in MAPS:
        state[name] = np.asarray(getattr(game, name)).astype(np.int64)
    return state


def write_state(env: gymnasium.Env, state: dict[str, Any]) -> None:
    game = _game(env)
    for name in INTS:
        setattr(game, name, int(state[name]))
    game.terminal = bool(state["terminal"])
    # A drawn map arrives flat (bounds are one value per component); the game keeps floats.
    for name in MAPS:
        setattr(game, name, np.asarray(state[name], dtype=np.float64).reshape(10, 10))
