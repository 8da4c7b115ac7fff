"""MiniGrid-DoorKey-5x5-v0 (minigrid's DoorKeyEnv, size 5) in the gymnax functional style
(envport's JAX contract, no autoreset).

Observation: uint8[148], the 7x7x3 egocentric image in C order then the direction (the
spec's reference presents minigrid's dict this way; the mission is a constant string).
Walls and closed doors hide what is behind them (Grid.process_vis).

Hand-written known-good port: a test subject for the verifier, not model output.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp

from .objects import DOOR, EMPTY, GOAL, GREY, KEY, LOCKED, WALL
from .rules import transition
from .view import observe

SIZE = 5
YELLOW = 4


class Params(NamedTuple):
    max_steps: int = 10 * SIZE * SIZE
    see_through_walls: bool = False


class State(NamedTuple):
    grid: jax.Array  # int32[W, H, 3]: (type, colour, state) per cell, indexed [x, y]
    agent_pos: jax.Array  # int32[2]: (x, y)
    agent_dir: jax.Array  # int32: 0 right, 1 down, 2 left, 3 up
    carrying: jax.Array  # int32[3]: the carried object's codes, (1, 0, 0) for nothing
    step_count: jax.Array  # int32


def default_params() -> Params:
    return Params()


def _uniform_cell(key, free):
    """A cell drawn uniformly among the `free` ones (place_obj's rejection sampling), as
    (x, y); `free` is bool[W, H]."""
    index = jax.random.categorical(key, jnp.where(free.reshape(-1), 0.0, -jnp.inf))
    return jnp.stack([index // SIZE, index % SIZE]).astype(jnp.int32)


def _obs(state: State, params: Params):
    return observe(
        state.grid, state.agent_pos, state.agent_dir, state.carrying, params.see_through_walls
    )


def reset(key: jax.Array, params: Params):
    """DoorKeyEnv._gen_grid: walls all round, the goal in the bottom-right corner, a wall
    splitting the room at a random column with a locked yellow door at a random row, the
    agent (random direction) and a yellow key on the left of it."""
    k_split, k_agent, k_dir, k_door, k_key = jax.random.split(key, 5)
    grid = jnp.zeros((SIZE, SIZE, 3), dtype=jnp.int32).at[..., 0].set(EMPTY)
    wall = jnp.array([WALL, GREY, 0], dtype=jnp.int32)
    grid = grid.at[0, :].set(wall).at[-1, :].set(wall).at[:, 0].set(wall).at[:, -1].set(wall)
    grid = grid.at[SIZE - 2, SIZE - 2].set(jnp.array([GOAL, 1, 0], dtype=jnp.int32))
    split = jax.random.randint(k_split, (), 2, SIZE - 2)
    columns = jnp.arange(SIZE)[:, None, None]
    grid = jnp.where(columns == split, wall, grid)

    xs = jnp.broadcast_to(jnp.arange(SIZE)[:, None], (SIZE, SIZE))
    left_free = (grid[..., 0] == EMPTY) & (xs < split)
    agent = _uniform_cell(k_agent, left_free)
    direction = jax.random.randint(k_dir, (), 0, 4)
    door_row = jax.random.randint(k_door, (), 1, SIZE - 2)
    grid = grid.at[split, door_row].set(jnp.array([DOOR, YELLOW, LOCKED], dtype=jnp.int32))
    not_agent = jnp.ones((SIZE, SIZE), dtype=bool).at[agent[0], agent[1]].set(False)
    key_cell = _uniform_cell(k_key, left_free & not_agent)
    grid = grid.at[key_cell[0], key_cell[1]].set(jnp.array([KEY, YELLOW, 0], dtype=jnp.int32))
    state = State(grid, agent, direction, jnp.array([1, 0, 0], dtype=jnp.int32), jnp.int32(0))
    return _obs(state, params), state


def step(key: jax.Array, state: State, action, params: Params):
    grid, pos, direction, carrying, count, reward, terminated = transition(
        state.grid,
        state.agent_pos,
        state.agent_dir,
        state.carrying,
        state.step_count,
        jnp.asarray(action, jnp.int32),
        params.max_steps,
    )
    state = State(grid, pos, direction, carrying, count)
    truncated = count >= params.max_steps
    return _obs(state, params), state, reward, terminated, truncated, {}


def state_from_reference(ref_state) -> State:
    return State(
        jnp.asarray(ref_state["grid"], dtype=jnp.int32),
        jnp.asarray(ref_state["agent_pos"], dtype=jnp.int32),
        jnp.asarray(ref_state["agent_dir"], dtype=jnp.int32),
        jnp.asarray(ref_state["carrying"], dtype=jnp.int32),
        jnp.asarray(ref_state["step_count"], dtype=jnp.int32),
    )


def state_to_reference(state: State):
    return {
        "grid": state.grid,
        "agent_pos": state.agent_pos,
        "agent_dir": state.agent_dir,
        "carrying": state.carrying,
        "step_count": state.step_count,
    }
