"""Acrobot-v1 in the gymnax functional style (envport's JAX contract).

Hand-written known-good port: a test subject for the verifier, not model output.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp

from .physics import Params, dynamics, is_terminated


class State(NamedTuple):
    physics: jax.Array  # [theta1, theta2, dtheta1, dtheta2], float32
    time: jax.Array


def default_params() -> Params:
    return Params()


def observation(state: State) -> jax.Array:
    s = state.physics
    return jnp.array(
        [jnp.cos(s[0]), jnp.sin(s[0]), jnp.cos(s[1]), jnp.sin(s[1]), s[2], s[3]]
    ).astype(jnp.float32)


def reset(key: jax.Array, params: Params):
    physics = jax.random.uniform(key, (4,), minval=-0.1, maxval=0.1)
    state = State(physics, jnp.int32(0))
    return observation(state), state


def step(key: jax.Array, state: State, action, params: Params):
    physics = dynamics(state.physics, action, params)
    state = State(physics, state.time + 1)
    terminated = is_terminated(physics, params)
    truncated = state.time >= params.max_steps_in_episode
    reward = jnp.where(terminated, 0.0, -1.0).astype(jnp.float32)
    return observation(state), state, reward, terminated, truncated, {}


def state_from_reference(ref_state) -> State:
    return State(
        jnp.asarray(ref_state["physics"], dtype=jnp.float32),
        jnp.asarray(ref_state["elapsed_steps"], dtype=jnp.int32),
    )


def state_to_reference(state: State):
    return {"physics": state.physics, "elapsed_steps": state.time}
