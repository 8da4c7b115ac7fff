"""mpe2's simple_spread_v3 (N=3, discrete actions, max_cycles 25) in the gymnax functional
style (envport's JAX contract for agents moving at once): a step takes the joint action
int[3], one Discrete action per agent in `possible_agents` order, and answers obs
float32[3, 18], reward float32[3], and the episode's terminated and truncated.

Hand-written known-good port: a test subject for the verifier, not model output. It computes
in float32 (a port never turns on jax_enable_x64), so it meets the spec's tolerances for the
jax target (`[targets.jax.tolerance]`), not the NumPy port's bit-identity.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp

from .physics import world_step
from .scenario import observations, rewards

AGENTS = 3
LANDMARKS = 3
DIM_C = 2


class Params(NamedTuple):
    max_cycles: int = 25


class State(NamedTuple):
    pos: jax.Array  # float32[N, 2]
    vel: jax.Array  # float32[N, 2]
    comm: jax.Array  # float32[N, DIM_C]
    landmarks: jax.Array  # float32[LANDMARKS, 2]
    steps: jax.Array  # int32: completed cycles


def default_params() -> Params:
    return Params()


def _obs(state: State):
    return observations(state.pos, state.vel, state.comm, state.landmarks)


def reset(key, params: Params):
    # reset_world: every agent's position, then every landmark's, U(-1, 1); at rest, silent.
    drawn = jax.random.uniform(key, (AGENTS + LANDMARKS, 2), minval=-1.0, maxval=1.0)
    state = State(
        pos=drawn[:AGENTS],
        vel=jnp.zeros((AGENTS, 2), jnp.float32),
        comm=jnp.zeros((AGENTS, DIM_C), jnp.float32),
        landmarks=drawn[AGENTS:],
        steps=jnp.int32(0),
    )
    return _obs(state), state


def step(key, state: State, action, params: Params):
    # Nothing in simple_spread's step is random (no u_noise or c_noise): the key is unused.
    actions = jnp.asarray(action).reshape(AGENTS)
    pos, vel = world_step(state.pos, state.vel, actions)
    # Silent agents: update_agent_state zeroes c every step.
    state = State(pos, vel, jnp.zeros_like(state.comm), state.landmarks, state.steps + 1)
    reward = rewards(pos, state.landmarks)
    truncated = state.steps >= params.max_cycles
    terminated = jnp.bool_(False)
    return _obs(state), state, reward, terminated, truncated, {}


def _field(ref, name):
    return jnp.asarray(ref[name], dtype=jnp.float32)


def state_from_reference(ref) -> State:
    return State(
        pos=jnp.stack([_field(ref, f"p_pos.agent_{i}") for i in range(AGENTS)]),
        vel=jnp.stack([_field(ref, f"p_vel.agent_{i}") for i in range(AGENTS)]),
        comm=jnp.stack([_field(ref, f"c.agent_{i}") for i in range(AGENTS)]),
        landmarks=jnp.stack([_field(ref, f"p_pos.landmark_{j}") for j in range(LANDMARKS)]),
        steps=jnp.asarray(ref["steps"], dtype=jnp.int32),
    )


def state_to_reference(state: State):
    out = {}
    for i in range(AGENTS):
        out[f"p_pos.agent_{i}"] = state.pos[i]
        out[f"p_vel.agent_{i}"] = state.vel[i]
        out[f"c.agent_{i}"] = state.comm[i]
    for j in range(LANDMARKS):
        out[f"p_pos.landmark_{j}"] = state.landmarks[j]
    out["steps"] = state.steps
    return out
