"""MinAtar Seaquest as the harness sees it (harness code, beside the spec).

`make` builds MinAtar's own Gymnasium env (`MinAtar/Seaquest-v1`, the minimal action set,
which for Seaquest is all six: no-op, left, up, right, down, fire) with MinAtar's default
sticky actions (0.1); `read_state` and `write_state` bridge the game's attributes.

The game keeps its objects as growing Python lists of lists, in the order they came:
friendly bullets `[x, y, right]`, enemy bullets `[x, y, right]`, fish `[x, y, right,
move_timer]`, enemy subs `[x, y, right, move_timer, shot_timer]` and divers `[x, y, right,
move_timer]`; `list.remove` takes an object out when it leaves the screen or is hit. The
bridge hands them over as those lists (the spec declares them lists of records with a
capacity), the direction as 0/1 and back as the game's bool. `last_action` is the
sticky-action wrapper's: the action a sticky step repeats, kept across episodes. The rest
are the game's own names: oxygen, diver_count, sub_x, sub_y, sub_or (facing right),
e_spawn_speed, e_spawn_timer, d_spawn_timer, move_speed, ramp_index, shot_timer, surface
(the sub has surfaced and not dived since) and terminal.
"""

from __future__ import annotations

from typing import Any

import gymnasium
from minatar.gym import register_envs

INTEGERS = (
    "oxygen",
    "diver_count",
    "sub_x",
    "sub_y",
    "e_spawn_speed",
    "e_spawn_timer",
    "d_spawn_timer",
    "move_speed",
    "ramp_index",
    "shot_timer",
)
FLAGS = ("sub_or", "surface", "terminal")
LISTS = ("f_bullets", "e_bullets", "e_fish", "e_subs", "divers")
# The position in each record that holds the direction (a bool in the game).
DIRECTION = 2


def make(id: str = "MinAtar/Seaquest-v1", **kwargs: Any) -> gymnasium.Env:
    # MinAtar registers its ids through a `gymnasium.envs` entry point that Gymnasium 1.x
    # no longer loads by itself: registering here is what `gym.make` needs.
    if id not in gymnasium.registry:
        register_envs()
    return gymnasium.make(id, **kwargs)


def _wrapper(env: gymnasium.Env) -> Any:
    return env.unwrapped.game  # type: ignore[attr-defined]


def read_state(env: gymnasium.Env) -> dict[str, Any]:
    game = _wrapper(env).env
    state: dict[str, Any] = {name: int(getattr(game, name)) for name in INTEGERS}
    state.update({name: bool(getattr(game, name)) for name in FLAGS})
    state["last_action"] = int(_wrapper(env).last_action)
    for name in LISTS:
        state[name] = [[int(v) for v in item] for item in getattr(game, name)]
    return state


def write_state(env: gymnasium.Env, state: dict[str, Any]) -> None:
    game = _wrapper(env).env
    for name in INTEGERS:
        setattr(game, name, int(state[name]))
    for name in FLAGS:
        setattr(game, name, bool(state[name]))
    _wrapper(env).last_action = int(state["last_action"])
    for name in LISTS:
        # The game's own shape: fresh Python lists of ints with the direction a bool, as
        # `_spawn_enemy` compares `z[2] != lr` and appends `[x, y, lr, ...]`.
        items = [[int(v) for v in item] for item in state[name]]
        for item in items:
            item[DIRECTION] = bool(item[DIRECTION])  # type: ignore[call-overload]
        setattr(game, name, items)
