"""Pendulum dynamics over a batch of B envs in NumPy: the torque clip, the cost, and one
semi-implicit Euler step (float64 state, float32 torque, like the reference).

Hand-written known-good port: a test subject for the verifier, not model output.
"""

import numpy as np

MAX_SPEED = 8.0
MAX_TORQUE = 2.0
DT = 0.05
G = 10.0
M = 1.0
L = 1.0
MAX_STEPS = 200


def clip_torque(actions: np.ndarray) -> np.ndarray:
    """actions: (B, 1) float32 torques -> (B,) clipped, still float32 as in the reference."""
    return np.clip(np.asarray(actions, dtype=np.float32), -MAX_TORQUE, MAX_TORQUE)[:, 0]


def angle_normalize(x: np.ndarray) -> np.ndarray:
    return ((x + np.pi) % (2 * np.pi)) - np.pi


def cost(physics: np.ndarray, u: np.ndarray) -> np.ndarray:
    th, thdot = physics[:, 0], physics[:, 1]
    return angle_normalize(th) ** 2 + 0.1 * thdot**2 + 0.001 * (u**2)


def dynamics(physics: np.ndarray, u: np.ndarray) -> np.ndarray:
    """physics: (B, 2) [th, thdot]; u: (B,) clipped torques. The new velocity first."""
    th, thdot = physics[:, 0], physics[:, 1]
    newthdot = thdot + (3 * G / (2 * L) * np.sin(th) + 3.0 / (M * L**2) * u) * DT
    newthdot = np.clip(newthdot, -MAX_SPEED, MAX_SPEED)
    return np.stack([th + newthdot * DT, newthdot], axis=1)
