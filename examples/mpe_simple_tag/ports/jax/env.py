"""mpe2's simple_tag_v3 (1 runner, 3 adversaries, 2 obstacles, discrete actions, max_cycles
25) in the gymnax functional style (envport's JAX contract for agents moving at once): a
step takes the joint action int[4], one Discrete action per agent in `possible_agents`
order (adversary_0, adversary_1, adversary_2, agent_0), and answers obs float32[4, 16] (the
runner's 14 components, then padding), reward float32[4], and the episode's terminated and
truncated.

Hand-written known-good port: a test subject for the verifier, not model output. It computes
in float32 (a port never turns on jax_enable_x64), so it meets the spec's tolerances for the
jax target (`[targets.jax.tolerance]`), not the NumPy port's bit-identity.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp

from .physics import AGENTS, world_step
from .scenario import observations, rewards

OBSTACLES = 2
DIM_C = 2
NAMES = ("adversary_0", "adversary_1", "adversary_2", "agent_0")


class Params(NamedTuple):
    max_cycles: int = 25


class State(NamedTuple):
    pos: jax.Array  # float32[4, 2]
    vel: jax.Array  # float32[4, 2]
    comm: jax.Array  # float32[4, DIM_C]
    obstacles: jax.Array  # float32[OBSTACLES, 2]
    steps: jax.Array  # int32: completed cycles


def default_params() -> Params:
    return Params()


def _obs(state: State):
    return observations(state.pos, state.vel, state.obstacles)


def reset(key, params: Params):
    # reset_world: every agent's position U(-1, 1), then every obstacle's U(-0.9, 0.9); at
    # rest, silent.
    agents_key, obstacles_key = jax.random.split(key)
    state = State(
        pos=jax.random.uniform(agents_key, (AGENTS, 2), minval=-1.0, maxval=1.0),
        vel=jnp.zeros((AGENTS, 2), jnp.float32),
        comm=jnp.zeros((AGENTS, DIM_C), jnp.float32),
        obstacles=jax.random.uniform(obstacles_key, (OBSTACLES, 2), minval=-0.9, maxval=0.9),
        steps=jnp.int32(0),
    )
    return _obs(state), state


def step(key, state: State, action, params: Params):
    # Nothing in simple_tag's step is random (no u_noise or c_noise): the key is unused.
    actions = jnp.asarray(action).reshape(AGENTS)
    pos, vel = world_step(state.pos, state.vel, state.obstacles, actions)
    # Silent agents: update_agent_state zeroes c every step.
    state = State(pos, vel, jnp.zeros_like(state.comm), state.obstacles, state.steps + 1)
    reward = rewards(pos)
    truncated = state.steps >= params.max_cycles
    terminated = jnp.bool_(False)
    return _obs(state), state, reward, terminated, truncated, {}


def _field(ref, name):
    return jnp.asarray(ref[name], dtype=jnp.float32)


def state_from_reference(ref) -> State:
    return State(
        pos=jnp.stack([_field(ref, f"p_pos.{name}") for name in NAMES]),
        vel=jnp.stack([_field(ref, f"p_vel.{name}") for name in NAMES]),
        comm=jnp.stack([_field(ref, f"c.{name}") for name in NAMES]),
        obstacles=jnp.stack([_field(ref, f"p_pos.landmark_{j}") for j in range(OBSTACLES)]),
        steps=jnp.asarray(ref["steps"], dtype=jnp.int32),
    )


def state_to_reference(state: State):
    out = {}
    for i, name in enumerate(NAMES):
        out[f"p_pos.{name}"] = state.pos[i]
        out[f"p_vel.{name}"] = state.vel[i]
        out[f"c.{name}"] = state.comm[i]
    for j in range(OBSTACLES):
        out[f"p_pos.landmark_{j}"] = state.obstacles[j]
    out["steps"] = state.steps
    return out
