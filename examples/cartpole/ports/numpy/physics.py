"""CartPole dynamics over a batch of B envs in NumPy (float64, like the reference).

Hand-written known-good port: a test subject for the verifier, not model output.
"""

import numpy as np

GRAVITY = 9.8
MASSCART = 1.0
MASSPOLE = 0.1
TOTAL_MASS = MASSPOLE + MASSCART
LENGTH = 0.5  # half the pole's length
POLEMASS_LENGTH = MASSPOLE * LENGTH
FORCE_MAG = 10.0
TAU = 0.02
THETA_THRESHOLD = 12 * 2 * np.pi / 360
X_THRESHOLD = 2.4
MAX_STEPS = 500


def dynamics(physics: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """physics: (B, 4) float64 [x, x_dot, theta, theta_dot]; actions: (B,) in {0, 1}."""
    x, x_dot, theta, theta_dot = physics.T
    force = np.where(actions == 1, FORCE_MAG, -FORCE_MAG)
    costheta = np.cos(theta)
    sintheta = np.sin(theta)
    temp = (force + POLEMASS_LENGTH * theta_dot**2 * sintheta) / TOTAL_MASS
    thetaacc = (GRAVITY * sintheta - costheta * temp) / (
        LENGTH * (4.0 / 3.0 - MASSPOLE * costheta**2 / TOTAL_MASS)
    )
    xacc = temp - POLEMASS_LENGTH * thetaacc * costheta / TOTAL_MASS
    return np.stack(
        [x + TAU * x_dot, x_dot + TAU * xacc, theta + TAU * theta_dot, theta_dot + TAU * thetaacc],
        axis=1,
    )


def is_terminated(physics: np.ndarray) -> np.ndarray:
    x, theta = physics[:, 0], physics[:, 2]
    return (
        (x < -X_THRESHOLD)
        | (x > X_THRESHOLD)
        | (theta < -THETA_THRESHOLD)
        | (theta > THETA_THRESHOLD)
    )
