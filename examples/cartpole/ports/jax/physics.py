"""CartPole dynamics in JAX: one explicit Euler step, and the termination test.

Hand-written known-good port: a test subject for the verifier, not model output.
"""

from typing import NamedTuple

import jax.numpy as jnp


class Params(NamedTuple):
    gravity: float = 9.8
    masscart: float = 1.0
    masspole: float = 0.1
    length: float = 0.5  # half the pole's length
    force_mag: float = 10.0
    tau: float = 0.02
    theta_threshold_radians: float = 12 * 2 * 3.141592653589793 / 360
    x_threshold: float = 2.4
    max_steps_in_episode: int = 500


def dynamics(x, x_dot, theta, theta_dot, action, params: Params):
    total_mass = params.masspole + params.masscart
    polemass_length = params.masspole * params.length
    force = jnp.where(action == 1, params.force_mag, -params.force_mag)
    costheta = jnp.cos(theta)
    sintheta = jnp.sin(theta)
    temp = (force + polemass_length * theta_dot**2 * sintheta) / total_mass
    thetaacc = (params.gravity * sintheta - costheta * temp) / (
        params.length * (4.0 / 3.0 - params.masspole * costheta**2 / total_mass)
    )
    xacc = temp - polemass_length * thetaacc * costheta / total_mass
    return (
        x + params.tau * x_dot,
        x_dot + params.tau * xacc,
        theta + params.tau * theta_dot,
        theta_dot + params.tau * thetaacc,
    )


def is_terminated(x, theta, params: Params):
    return (
        (x < -params.x_threshold)
        | (x > params.x_threshold)
        | (theta < -params.theta_threshold_radians)
        | (theta > params.theta_threshold_radians)
    )
