"""Pendulum dynamics in JAX: the torque clip, the cost, and one semi-implicit Euler step.

Hand-written known-good port: a test subject for the verifier, not model output.
"""

from typing import NamedTuple

import jax.numpy as jnp

PI = 3.141592653589793


class Params(NamedTuple):
    max_speed: float = 8.0
    max_torque: float = 2.0
    dt: float = 0.05
    g: float = 10.0
    m: float = 1.0
    l: float = 1.0  # noqa: E741 (the reference's name)
    max_steps_in_episode: int = 200


def clip_torque(action, params: Params):
    """The action is a float32[1] torque; out-of-range torques are clipped, not rejected."""
    torque = jnp.asarray(action, jnp.float32).reshape(-1)[0]
    return jnp.clip(torque, -params.max_torque, params.max_torque)


def angle_normalize(x):
    return ((x + PI) % (2 * PI)) - PI


def cost(th, thdot, u):
    """What the step is charged (the reward is its negative)."""
    return angle_normalize(th) ** 2 + 0.1 * thdot**2 + 0.001 * u**2


def dynamics(th, thdot, u, params: Params):
    """The new angular velocity (clipped) first, then the angle from it."""
    newthdot = (
        thdot
        + (3 * params.g / (2 * params.l) * jnp.sin(th) + 3.0 / (params.m * params.l**2) * u)
        * params.dt
    )
    newthdot = jnp.clip(newthdot, -params.max_speed, params.max_speed)
    return th + newthdot * params.dt, newthdot
