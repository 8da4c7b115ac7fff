"""Pendulum-v1 in the gymnax functional style (envport's JAX contract), continuous actions.

Hand-written known-good port: a test subject for the verifier, not model output.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp

from .physics import Params, clip_torque, cost, dynamics


class State(NamedTuple):
    th: jax.Array
    thdot: jax.Array
    time: jax.Array


def default_params() -> Params:
    return Params()


def observation(state: State) -> jax.Array:
    return jnp.array([jnp.cos(state.th), jnp.sin(state.th), state.thdot]).astype(jnp.float32)


def reset(key: jax.Array, params: Params):
    th, thdot = jax.random.uniform(key, (2,), minval=-1.0, maxval=1.0) * jnp.array([jnp.pi, 1.0])
    state = State(th, thdot, jnp.int32(0))
    return observation(state), state


def step(key: jax.Array, state: State, action, params: Params):
    u = clip_torque(action, params)
    reward = -cost(state.th, state.thdot, u)
    th, thdot = dynamics(state.th, state.thdot, u, params)
    state = State(th, thdot, state.time + 1)
    truncated = state.time >= params.max_steps_in_episode
    return observation(state), state, reward, jnp.bool_(False), truncated, {}


def state_from_reference(ref_state) -> State:
    physics = jnp.asarray(ref_state["physics"], dtype=jnp.float32)
    return State(physics[0], physics[1], jnp.asarray(ref_state["elapsed_steps"], dtype=jnp.int32))


def state_to_reference(state: State):
    return {"physics": jnp.asarray([state.th, state.thdot]), "elapsed_steps": state.time}
