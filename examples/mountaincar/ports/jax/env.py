"""MountainCar-v0 in the gymnax functional style (envport's JAX contract).

Hand-written known-good port: a test subject for the verifier, not model output.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp

from .physics import Params, dynamics, is_terminated


class State(NamedTuple):
    position: jax.Array
    velocity: jax.Array
    time: jax.Array


def default_params() -> Params:
    return Params()


def observation(state: State) -> jax.Array:
    return jnp.array([state.position, state.velocity]).astype(jnp.float32)


def reset(key: jax.Array, params: Params):
    position = jax.random.uniform(key, (), minval=-0.6, maxval=-0.4)
    state = State(position, jnp.float32(0.0), jnp.int32(0))
    return observation(state), state


def step(key: jax.Array, state: State, action, params: Params):
    position, velocity = dynamics(state.position, state.velocity, action, params)
    state = State(position, velocity, state.time + 1)
    terminated = is_terminated(position, velocity, params)
    truncated = state.time >= params.max_steps_in_episode
    reward = jnp.float32(-1.0)
    return observation(state), state, reward, terminated, truncated, {}


def state_from_reference(ref_state) -> State:
    physics = jnp.asarray(ref_state["physics"], dtype=jnp.float32)
    return State(physics[0], physics[1], jnp.asarray(ref_state["elapsed_steps"], dtype=jnp.int32))


def state_to_reference(state: State):
    return {
        "physics": jnp.asarray([state.position, state.velocity]),
        "elapsed_steps": state.time,
    }
