"""Taxi (Gymnasium's Taxi-v4, the v3 dynamics) in the gymnax functional style (envport's JAX
contract); the observation is the state code, an integer.

Hand-written known-good port: a test subject for the verifier, not model output.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp

from .rules import encode, transition


class Params(NamedTuple):
    max_steps_in_episode: int = 200


class State(NamedTuple):
    s: jax.Array
    time: jax.Array


def default_params() -> Params:
    return Params()


def reset(key: jax.Array, params: Params):
    # Anywhere on the grid, the passenger at a stand, the destination another stand.
    k_row, k_col, k_pass, k_dest = jax.random.split(key, 4)
    passenger = jax.random.randint(k_pass, (), 0, 4)
    destination = (passenger + jax.random.randint(k_dest, (), 1, 4)) % 4
    s = encode(
        jax.random.randint(k_row, (), 0, 5),
        jax.random.randint(k_col, (), 0, 5),
        passenger,
        destination,
    )
    return s, State(s, jnp.int32(0))


def step(key: jax.Array, state: State, action, params: Params):
    s, reward, terminated = transition(state.s, action)
    state = State(s, state.time + 1)
    truncated = state.time >= params.max_steps_in_episode
    return s, state, reward.astype(jnp.float32), terminated, truncated, {}


def state_from_reference(ref_state) -> State:
    return State(
        jnp.asarray(ref_state["s"], dtype=jnp.int32),
        jnp.asarray(ref_state["elapsed_steps"], dtype=jnp.int32),
    )


def state_to_reference(state: State):
    return {"s": state.s, "elapsed_steps": state.time}
