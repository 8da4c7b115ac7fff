"""Acrobot dynamics in JAX: one fourth-order Runge-Kutta step of the book equations, the
angle wrap and velocity bounds, and the termination test.

Hand-written known-good port: a test subject for the verifier, not model output.
"""

from typing import NamedTuple

import jax.numpy as jnp

PI = 3.141592653589793


class Params(NamedTuple):
    dt: float = 0.2
    link_length_1: float = 1.0
    link_mass_1: float = 1.0
    link_mass_2: float = 1.0
    link_com_pos_1: float = 0.5
    link_com_pos_2: float = 0.5
    link_moi: float = 1.0
    max_vel_1: float = 4 * PI
    max_vel_2: float = 9 * PI
    gravity: float = 9.8
    max_steps_in_episode: int = 500


def torque_of(action):
    """Actions 0, 1, 2 apply torques -1, 0, +1 at the actuated joint. Looked up, as the
    reference's AVAIL_TORQUE[a] is: it reads a = -1, -2, -3 as the last, middle, first."""
    return jnp.array([-1.0, 0.0, 1.0], dtype=jnp.float32)[action]


def derivatives(s, torque, params: Params):
    """d/dt of [theta1, theta2, dtheta1, dtheta2] (the book's equations, not the NIPS ones)."""
    m1, m2 = params.link_mass_1, params.link_mass_2
    l1, lc1, lc2 = params.link_length_1, params.link_com_pos_1, params.link_com_pos_2
    i1 = i2 = params.link_moi
    g = params.gravity
    theta1, theta2, dtheta1, dtheta2 = s[0], s[1], s[2], s[3]
    d1 = m1 * lc1**2 + m2 * (l1**2 + lc2**2 + 2 * l1 * lc2 * jnp.cos(theta2)) + i1 + i2
    d2 = m2 * (lc2**2 + l1 * lc2 * jnp.cos(theta2)) + i2
    phi2 = m2 * lc2 * g * jnp.cos(theta1 + theta2 - PI / 2.0)
    phi1 = (
        -m2 * l1 * lc2 * dtheta2**2 * jnp.sin(theta2)
        - 2 * m2 * l1 * lc2 * dtheta2 * dtheta1 * jnp.sin(theta2)
        + (m1 * lc1 + m2 * l1) * g * jnp.cos(theta1 - PI / 2)
        + phi2
    )
    ddtheta2 = (torque + d2 / d1 * phi1 - m2 * l1 * lc2 * dtheta1**2 * jnp.sin(theta2) - phi2) / (
        m2 * lc2**2 + i2 - d2**2 / d1
    )
    ddtheta1 = -(d2 * ddtheta2 + phi1) / d1
    return jnp.array([dtheta1, dtheta2, ddtheta1, ddtheta2])


def wrap(x, low, high):
    """Shift x by whole periods into [low, high], as the reference's while loops do."""
    period = high - low
    x = jnp.where(x > high, x - period * jnp.ceil((x - high) / period), x)
    return jnp.where(x < low, x + period * jnp.ceil((low - x) / period), x)


def dynamics(s, action, params: Params):
    """The state after one step: RK4 over dt, angles wrapped, velocities bounded."""
    torque = torque_of(action)
    dt = params.dt
    k1 = derivatives(s, torque, params)
    k2 = derivatives(s + dt / 2 * k1, torque, params)
    k3 = derivatives(s + dt / 2 * k2, torque, params)
    k4 = derivatives(s + dt * k3, torque, params)
    ns = s + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
    return jnp.array(
        [
            wrap(ns[0], -PI, PI),
            wrap(ns[1], -PI, PI),
            jnp.clip(ns[2], -params.max_vel_1, params.max_vel_1),
            jnp.clip(ns[3], -params.max_vel_2, params.max_vel_2),
        ]
    )


def is_terminated(s, params: Params):
    """The free end is above the target height: -cos(theta1) - cos(theta1 + theta2) > 1."""
    return -jnp.cos(s[0]) - jnp.cos(s[1] + s[0]) > 1.0
