"""The MiniGrid reference as the harness sees it (harness code, beside the spec).

`make` builds the minigrid env and presents its observation as one array; `read_state` and
`write_state` bridge its state (a grid of WorldObj instances, the agent, what it carries)
into fixed-shape integer arrays of minigrid's own codes and back.

Observation. MiniGrid's observation is a dict {image, direction, mission}. The harness
compares arrays, so the reference here answers uint8[148]: the 7x7x3 egocentric `image`
flattened in C order (index (x * 7 + y) * 3 + channel; x the view column, left to right; y the
view row, far to near; the agent at x = 3, y = 6; channels object type, colour, state),
followed by `direction` (0 right, 1 down, 2 left, 3 up). `mission` is left out: it is a
constant string for these envs (Empty: "get to the green goal square"; DoorKey: "use the key
to open the door and then get to the goal"), so it carries no information a port could get
wrong.

State (names chosen to be leaf paths of a structured state):
    grid        int64[W, H, 3]   grid[x][y] = (type, colour, state), minigrid's
                                 OBJECT_TO_IDX, COLOR_TO_IDX, STATE_TO_IDX (door: 0 open,
                                 1 closed, 2 locked); an empty cell is (1, 0, 0)
    agent_pos   int64[2]         (x, y)
    agent_dir   int64            0 right, 1 down, 2 left, 3 up
    carrying    int64[3]         the carried object's (type, colour, state), (1, 0, 0) if none
    step_count  int64            steps taken this episode; truncation at max_steps

Writing decodes each cell with minigrid's own `WorldObj.decode`, so a drawn state is the
reference's canonical form once read back (a goal is always green, a wall's state 0).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import gymnasium
import minigrid  # noqa: F401  (registers the MiniGrid ids with Gymnasium)
import numpy as np
from gymnasium import spaces
from minigrid.core.constants import OBJECT_TO_IDX
from minigrid.core.grid import Grid
from minigrid.core.world_object import WorldObj

VIEW = 7
OBS_SIZE = VIEW * VIEW * 3 + 1
NOTHING = np.array([OBJECT_TO_IDX["empty"], 0, 0], dtype=np.int64)


class FlatObservation(gymnasium.ObservationWrapper):
    """{image, direction, mission} -> uint8[148]: the image flattened, then the direction."""

    def __init__(self, env: gymnasium.Env) -> None:
        super().__init__(env)
        self.observation_space = spaces.Box(0, 255, (OBS_SIZE,), np.uint8)

    def observation(self, observation: dict[str, Any]) -> np.ndarray:
        image = np.asarray(observation["image"], dtype=np.uint8).reshape(-1)
        return np.concatenate([image, np.array([observation["direction"]], dtype=np.uint8)])

    @property
    def spec(self) -> Any:
        # MiniGrid truncates by itself at `max_steps` (no TimeLimit wrapper): the harness
        # learns the limit here, to start episodes near it and to draw the counter's ends.
        inner = self.env.spec
        if inner is None:
            return None
        return dataclasses.replace(inner, max_episode_steps=self.env.unwrapped.max_steps)


def make(id: str, **kwargs: Any) -> gymnasium.Env:
    return FlatObservation(gymnasium.make(id, **kwargs))


def _code(obj: WorldObj | None) -> np.ndarray:
    return NOTHING.copy() if obj is None else np.array(obj.encode(), dtype=np.int64)


def read_state(env: gymnasium.Env) -> dict[str, Any]:
    base = env.unwrapped
    return {
        "grid": base.grid.encode().astype(np.int64),
        "agent_pos": np.array(base.agent_pos, dtype=np.int64),
        "agent_dir": np.int64(base.agent_dir),
        "carrying": _code(base.carrying),
        "step_count": np.int64(base.step_count),
    }


def write_state(env: gymnasium.Env, state: dict[str, Any]) -> None:
    base = env.unwrapped
    shape = (base.width, base.height, 3)
    # A drawn grid arrives flat (state bounds are one value per component).
    base.grid, _ = Grid.decode(np.asarray(state["grid"], dtype=np.int64).reshape(shape))
    x, y = (int(v) for v in np.asarray(state["agent_pos"]).reshape(2))
    base.agent_pos = (x, y)
    base.agent_dir = int(state["agent_dir"])
    carrying = [int(v) for v in np.asarray(state["carrying"]).reshape(3)]
    base.carrying = WorldObj.decode(*carrying)
    base.step_count = int(state["step_count"])
