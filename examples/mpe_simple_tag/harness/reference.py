"""The state bridge of mpe2's simple_tag (`simple_tag_v3.parallel_env()`), for envport.

MPE's state is its World: each agent's position `p_pos`, velocity `p_vel` and communication
`c` (float64 [2] each; simple_tag's agents are silent, so `c` is zeros after every step),
each obstacle's position (obstacles never move: their velocity is always zero and is not
bridged), and the AEC env's `steps`, the completed cycles that decide truncation at
`max_cycles`. The bridge names them by entity: `p_pos.adversary_1`, `p_pos.agent_0` (the
runner), `p_pos.landmark_0` (mpe2 names an obstacle "landmark 0"; the space is dropped).
An agent's size, accel and max_speed are the scenario's constants (no curriculum), not
state. Writing a state gives each entity fresh arrays (the world steps them in place) and
starts a cycle with every agent present (`fresh_cycle`), so a state written after an
episode ended is stepped like one reached in play.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from envport.targets.simultaneous import fresh_cycle


def _landmark(index: int) -> str:
    return f"landmark_{index}"


def read_state(env: Any) -> dict[str, Any]:
    game = env.unwrapped
    world = game.world
    state: dict[str, Any] = {}
    for agent in world.agents:
        state[f"p_pos.{agent.name}"] = np.array(agent.state.p_pos, dtype=np.float64)
        state[f"p_vel.{agent.name}"] = np.array(agent.state.p_vel, dtype=np.float64)
        state[f"c.{agent.name}"] = np.array(agent.state.c, dtype=np.float64)
    for index, landmark in enumerate(world.landmarks):
        state[f"p_pos.{_landmark(index)}"] = np.array(landmark.state.p_pos, dtype=np.float64)
    state["steps"] = int(game.steps)
    return state


def write_state(env: Any, state: dict[str, Any]) -> None:
    game = env.unwrapped
    world = game.world
    for agent in world.agents:
        agent.state.p_pos = np.array(state[f"p_pos.{agent.name}"], dtype=np.float64)
        agent.state.p_vel = np.array(state[f"p_vel.{agent.name}"], dtype=np.float64)
        agent.state.c = np.array(state[f"c.{agent.name}"], dtype=np.float64)
    for index, landmark in enumerate(world.landmarks):
        landmark.state.p_pos = np.array(state[f"p_pos.{_landmark(index)}"], dtype=np.float64)
        landmark.state.p_vel = np.zeros(world.dim_p)
    game.steps = int(state["steps"])
    fresh_cycle(env)
