"""MountainCar dynamics over a batch of B envs in NumPy (float64, like the reference).

Hand-written known-good port: a test subject for the verifier, not model output.
"""

import numpy as np

MIN_POSITION = -1.2
MAX_POSITION = 0.6
MAX_SPEED = 0.07
GOAL_POSITION = 0.5
GOAL_VELOCITY = 0.0
FORCE = 0.001
GRAVITY = 0.0025
MAX_STEPS = 200


def dynamics(physics: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """physics: (B, 2) float64 [position, velocity]; actions: (B,) in {0, 1, 2}."""
    position, velocity = physics[:, 0], physics[:, 1]
    velocity = velocity + (np.asarray(actions) - 1) * FORCE + np.cos(3 * position) * (-GRAVITY)
    velocity = np.clip(velocity, -MAX_SPEED, MAX_SPEED)
    position = np.clip(position + velocity, MIN_POSITION, MAX_POSITION)
    # The left wall is inelastic: the car stops there.
    velocity = np.where((position == MIN_POSITION) & (velocity < 0), 0.0, velocity)
    return np.stack([position, velocity], axis=1)


def is_terminated(physics: np.ndarray) -> np.ndarray:
    return (physics[:, 0] >= GOAL_POSITION) & (physics[:, 1] >= GOAL_VELOCITY)
