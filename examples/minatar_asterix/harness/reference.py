"""MinAtar Asterix as the harness sees it (harness code, beside the spec).

`make` builds MinAtar's own Gymnasium env (`MinAtar/Asterix-v1`, the minimal action set
no-op, left, up, right, down) with MinAtar's default sticky actions (0.1); `read_state` and
`write_state` bridge the game's attributes into fixed-shape arrays and back.

The game keeps its objects as a list of eight slots (`entities`), each None or `[x, y,
moving_right, is_gold]`, the object in slot i always on row i + 1 (it spawns there and only
moves sideways). The bridge carries each slot as `slot_taken`, `slot_x`, `slot_right` and
`slot_gold` (a free slot's numbers are 0), so an object that comes and goes is a flag that
flips. `last_action` is the sticky-action wrapper's (`env.unwrapped.game`): the action a
sticky step repeats, kept across episodes as MinAtar keeps it. The rest are the game's own
names: player_x, player_y, spawn_speed, spawn_timer, move_speed, move_timer, ramp_timer,
ramp_index (the difficulty ramp) and terminal.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from minatar.gym import register_envs

SLOTS = 8
SCALARS = (
    "player_x",
    "player_y",
    "spawn_speed",
    "spawn_timer",
    "move_speed",
    "move_timer",
    "ramp_timer",
    "ramp_index",
)


def make(id: str = "MinAtar/Asterix-v1", **kwargs: Any) -> gymnasium.Env:
    # MinAtar registers its ids through a `gymnasium.envs` entry point that Gymnasium 1.x
    # no longer loads by itself: registering here is what `gym.make` needs.
    if id not in gymnasium.registry:
        register_envs()
    return gymnasium.make(id, **kwargs)


def _wrapper(env: gymnasium.Env) -> Any:
    return env.unwrapped.game  # type: ignore[attr-defined]


def read_state(env: gymnasium.Env) -> dict[str, Any]:
    game = _wrapper(env).env
    state: dict[str, Any] = {name: np.int64(getattr(game, name)) for name in SCALARS}
    state["terminal"] = np.bool_(game.terminal)
    state["last_action"] = np.int64(_wrapper(env).last_action)
    slots = [entity if entity is not None else [0, 0, False, False] for entity in game.entities]
    state["slot_taken"] = np.array([e is not None for e in game.entities])
    state["slot_x"] = np.array([int(s[0]) for s in slots], dtype=np.int64)
    state["slot_right"] = np.array([bool(s[2]) for s in slots])
    state["slot_gold"] = np.array([bool(s[3]) for s in slots])
    return state


def write_state(env: gymnasium.Env, state: dict[str, Any]) -> None:
    game = _wrapper(env).env
    for name in SCALARS:
        setattr(game, name, int(state[name]))
    game.terminal = bool(state["terminal"])
    _wrapper(env).last_action = int(state["last_action"])
    taken, x, right, gold = (
        np.asarray(state[name]).reshape(SLOTS)
        for name in ("slot_taken", "slot_x", "slot_right", "slot_gold")
    )
    # The game's own shape: Python lists compared with `x[0:2] == [player_x, player_y]`.
    game.entities = [
        [int(x[i]), i + 1, bool(right[i]), bool(gold[i])] if taken[i] else None
        for i in range(SLOTS)
    ]
