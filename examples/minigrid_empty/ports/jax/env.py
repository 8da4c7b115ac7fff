"""MiniGrid-Empty-8x8-v0 (minigrid's EmptyEnv, size 8) in the gymnax functional style
(envport's JAX contract, no autoreset).

Observation: uint8[148], the 7x7x3 egocentric image in C order then the direction (the
spec's reference presents minigrid's dict this way; the mission is a constant string).
Empty sees through walls: every cell of the view is visible.

Hand-written known-good port: a test subject for the verifier, not model output.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp

from .objects import GOAL, GREY, WALL
from .rules import transition
from .view import observe

SIZE = 8


class Params(NamedTuple):
    max_steps: int = 4 * SIZE * SIZE
    see_through_walls: bool = True


class State(NamedTuple):
    grid: jax.Array  # int32[W, H, 3]: (type, colour, state) per cell, indexed [x, y]
    agent_pos: jax.Array  # int32[2]: (x, y)
    agent_dir: jax.Array  # int32: 0 right, 1 down, 2 left, 3 up
    carrying: jax.Array  # int32[3]: the carried object's codes, (1, 0, 0) for nothing
    step_count: jax.Array  # int32


def default_params() -> Params:
    return Params()


def empty_grid(size: int = SIZE):
    """Walls all round (grey), the goal (green) in the bottom-right corner."""
    grid = jnp.zeros((size, size, 3), dtype=jnp.int32).at[..., 0].set(1)
    wall = jnp.array([WALL, GREY, 0], dtype=jnp.int32)
    grid = grid.at[0, :].set(wall).at[-1, :].set(wall).at[:, 0].set(wall).at[:, -1].set(wall)
    return grid.at[size - 2, size - 2].set(jnp.array([GOAL, 1, 0], dtype=jnp.int32))


def _obs(state: State, params: Params):
    return observe(
        state.grid, state.agent_pos, state.agent_dir, state.carrying, params.see_through_walls
    )


def reset(key: jax.Array, params: Params):
    # Deterministic: the agent starts at (1, 1) facing right.
    state = State(
        empty_grid(),
        jnp.array([1, 1], dtype=jnp.int32),
        jnp.int32(0),
        jnp.array([1, 0, 0], dtype=jnp.int32),
        jnp.int32(0),
    )
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
