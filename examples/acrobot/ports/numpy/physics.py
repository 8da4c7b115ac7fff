"""Acrobot dynamics over a batch of B envs in NumPy (float64, like the reference): one RK4
step of the book equations, the angle wrap and velocity bounds, and the termination test.

Hand-written known-good port: a test subject for the verifier, not model output.
"""

import numpy as np

DT = 0.2
LINK_LENGTH_1 = 1.0
LINK_MASS_1 = 1.0
LINK_MASS_2 = 1.0
LINK_COM_POS_1 = 0.5
LINK_COM_POS_2 = 0.5
LINK_MOI = 1.0
MAX_VEL_1 = 4 * np.pi
MAX_VEL_2 = 9 * np.pi
GRAVITY = 9.8
MAX_STEPS = 500
TORQUES = np.array([-1.0, 0.0, 1.0])


def derivatives(s: np.ndarray, torque: np.ndarray) -> np.ndarray:
    """s: (B, 4) [theta1, theta2, dtheta1, dtheta2]; torque: (B,). Returns d/dt s, (B, 4)."""
    m1, m2, l1 = LINK_MASS_1, LINK_MASS_2, LINK_LENGTH_1
    lc1, lc2, i1, i2, g = LINK_COM_POS_1, LINK_COM_POS_2, LINK_MOI, LINK_MOI, GRAVITY
    theta1, theta2, dtheta1, dtheta2 = s.T
    d1 = m1 * lc1**2 + m2 * (l1**2 + lc2**2 + 2 * l1 * lc2 * np.cos(theta2)) + i1 + i2
    d2 = m2 * (lc2**2 + l1 * lc2 * np.cos(theta2)) + i2
    phi2 = m2 * lc2 * g * np.cos(theta1 + theta2 - np.pi / 2.0)
    phi1 = (
        -m2 * l1 * lc2 * dtheta2**2 * np.sin(theta2)
        - 2 * m2 * l1 * lc2 * dtheta2 * dtheta1 * np.sin(theta2)
        + (m1 * lc1 + m2 * l1) * g * np.cos(theta1 - np.pi / 2)
        + phi2
    )
    ddtheta2 = (torque + d2 / d1 * phi1 - m2 * l1 * lc2 * dtheta1**2 * np.sin(theta2) - phi2) / (
        m2 * lc2**2 + i2 - d2**2 / d1
    )
    ddtheta1 = -(d2 * ddtheta2 + phi1) / d1
    return np.stack([dtheta1, dtheta2, ddtheta1, ddtheta2], axis=1)


def wrap(x: np.ndarray, low: float, high: float) -> np.ndarray:
    """Shift x by whole periods into [low, high], as the reference's while loops do."""
    period = high - low
    x = np.where(x > high, x - period * np.ceil((x - high) / period), x)
    return np.where(x < low, x + period * np.ceil((low - x) / period), x)


def dynamics(s: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """s: (B, 4) float64; actions: (B,) in {0, 1, 2}. The state after one step."""
    torque = TORQUES[np.asarray(actions, dtype=np.int64)]
    k1 = derivatives(s, torque)
    k2 = derivatives(s + DT / 2.0 * k1, torque)
    k3 = derivatives(s + DT / 2.0 * k2, torque)
    k4 = derivatives(s + DT * k3, torque)
    ns = s + DT / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
    return np.stack(
        [
            wrap(ns[:, 0], -np.pi, np.pi),
            wrap(ns[:, 1], -np.pi, np.pi),
            np.clip(ns[:, 2], -MAX_VEL_1, MAX_VEL_1),
            np.clip(ns[:, 3], -MAX_VEL_2, MAX_VEL_2),
        ],
        axis=1,
    )


def is_terminated(s: np.ndarray) -> np.ndarray:
    """The free end is above the target height: -cos(theta1) - cos(theta1 + theta2) > 1."""
    return -np.cos(s[:, 0]) - np.cos(s[:, 1] + s[:, 0]) > 1.0
