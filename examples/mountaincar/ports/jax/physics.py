"""MountainCar dynamics in JAX: velocity then position, each clipped, and the goal test.

Hand-written known-good port: a test subject for the verifier, not model output.
"""

from typing import NamedTuple

import jax.numpy as jnp


class Params(NamedTuple):
    min_position: float = -1.2
    max_position: float = 0.6
    max_speed: float = 0.07
    goal_position: float = 0.5
    goal_velocity: float = 0.0
    force: float = 0.001
    gravity: float = 0.0025
    max_steps_in_episode: int = 200


def dynamics(position, velocity, action, params: Params):
    """One step: push (action - 1) * force against gravity along the hill cos(3x)."""
    velocity = velocity + (action - 1) * params.force + jnp.cos(3 * position) * (-params.gravity)
    velocity = jnp.clip(velocity, -params.max_speed, params.max_speed)
    position = jnp.clip(position + velocity, params.min_position, params.max_position)
    # The left wall is inelastic: the car stops there.
    velocity = jnp.where((position == params.min_position) & (velocity < 0), 0.0, velocity)
    return position, velocity


def is_terminated(position, velocity, params: Params):
    return (position >= params.goal_position) & (velocity >= params.goal_velocity)
