"""FrozenLake-v1 (4x4, slippery) in the gymnax functional style (envport's JAX contract),
with explicit randomness: `sample_noise` draws the slip, `step_given_noise` is the
deterministic rest, and `step` is the two composed.

Hand-written known-good port: a test subject for the verifier, not model output.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp

from .lake import slip_direction, transition


class Params(NamedTuple):
    success_rate: float = 1.0 / 3.0
    max_steps_in_episode: int = 100


class State(NamedTuple):
    s: jax.Array
    time: jax.Array


def default_params() -> Params:
    return Params()


def reset(key: jax.Array, params: Params):
    state = State(jnp.int32(0), jnp.int32(0))
    return state.s, state


def sample_noise(key: jax.Array, state: State, action, params: Params):
    """Which way the agent goes: 1 as intended with `success_rate`, else 0 or 2 evenly."""
    fail = (1.0 - params.success_rate) / 2.0
    return jax.random.choice(key, 3, p=jnp.array([fail, params.success_rate, fail]))


def step_given_noise(noise, state: State, action, params: Params):
    s, reward, terminated = transition(state.s, slip_direction(action, noise))
    state = State(s, state.time + 1)
    truncated = state.time >= params.max_steps_in_episode
    return s, state, reward.astype(jnp.float32), terminated, truncated, {}


def step(key: jax.Array, state: State, action, params: Params):
    return step_given_noise(sample_noise(key, state, action, params), state, action, params)


def state_from_reference(ref_state) -> State:
    return State(
        jnp.asarray(ref_state["s"], dtype=jnp.int32),
        jnp.asarray(ref_state["elapsed_steps"], dtype=jnp.int32),
    )


def state_to_reference(state: State):
    return {"s": state.s, "elapsed_steps": state.time}
