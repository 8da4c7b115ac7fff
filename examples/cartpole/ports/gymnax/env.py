"""Bridge that lets gymnax's own CartPole-v1 be verified by envport, unchanged.

This file is all a third-party gymnax env needs: gymnax's `step_env` (the transition before
its autoreset) split into terminated and truncated, and the reference's state mapped onto
gymnax's EnvState.
"""

import jax.numpy as jnp
from gymnax.environments.classic_control.cartpole import CartPole, EnvState

_env = CartPole()


def default_params():
    return _env.default_params


def reset(key, params):
    return _env.reset_env(key, params)


def step(key, state, action, params):
    obs, state, reward, _, info = _env.step_env(key, state, action, params)
    terminated = _env.is_terminated(state, params)
    truncated = state.time >= params.max_steps_in_episode
    return obs, state, reward, terminated, truncated, info


def state_from_reference(ref_state):
    physics = jnp.asarray(ref_state["physics"], dtype=jnp.float32)
    return EnvState(
        x=physics[0],
        x_dot=physics[1],
        theta=physics[2],
        theta_dot=physics[3],
        time=jnp.asarray(ref_state["elapsed_steps"], dtype=jnp.int32),
    )
