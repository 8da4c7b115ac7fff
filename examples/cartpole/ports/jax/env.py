"""CartPole-v1 in the gymnax functional style (envport's JAX contract).

Hand-written known-good port: a test subject for the verifier, not model output.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp

from .physics import Params, dynamics, is_terminated


class State(NamedTuple):
    x: jax.Array
    x_dot: jax.Array
    theta: jax.Array
    theta_dot: jax.Array
    time: jax.Array


def default_params() -> Params:
    return Params()


def observation(state: State) -> jax.Array:
    # jnp.array, not jnp.stack: under vmap a stack is built as (4, B) and then transposed.
    return jnp.array([state.x, state.x_dot, state.theta, state.theta_dot]).astype(jnp.float32)


def reset(key: jax.Array, params: Params):
    x, x_dot, theta, theta_dot = jax.random.uniform(key, (4,), minval=-0.05, maxval=0.05)
    state = State(x, x_dot, theta, theta_dot, jnp.int32(0))
    return observation(state), state


def step(key: jax.Array, state: State, action, params: Params):
    x, x_dot, theta, theta_dot = dynamics(
        state.x, state.x_dot, state.theta, state.theta_dot, action, params
    )
    state = State(x, x_dot, theta, theta_dot, state.time + 1)
    terminated = is_terminated(x, theta, params)
    truncated = state.time >= params.max_steps_in_episode
    reward = jnp.float32(1.0)
    return observation(state), state, reward, terminated, truncated, {}


def state_from_reference(ref_state) -> State:
    physics = jnp.asarray(ref_state["physics"], dtype=jnp.float32)
    return State(
        physics[0],
        physics[1],
        physics[2],
        physics[3],
        jnp.asarray(ref_state["elapsed_steps"], dtype=jnp.int32),
    )


def state_to_reference(state: State):
    physics = jnp.asarray([state.x, state.x_dot, state.theta, state.theta_dot])
    return {"physics": physics, "elapsed_steps": state.time}
