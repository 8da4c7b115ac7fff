"""simple_spread's rewards and observations (mpe2's `mpe2.simple_spread.simple_spread`, with
SimpleEnv's `local_ratio` mixing), for B worlds at once."""

import numpy as np

from .physics import AGENT_SIZE

LOCAL_RATIO = 0.5


def _distance(a, b):
    return np.sqrt(np.sum(np.square(a - b), axis=-1))


def global_reward(pos, landmarks):
    """-(sum over landmarks of the closest agent's distance), summed landmark by landmark."""
    reward = np.zeros(pos.shape[0])
    for j in range(landmarks.shape[1]):
        dists = _distance(pos, landmarks[:, j][:, None])
        reward = reward - np.min(dists, axis=1)
    return reward


def collision_penalty(pos):
    """float64[B, N]: -1 for every other agent an agent overlaps (dist < the sizes' sum)."""
    count = pos.shape[1]
    reward = np.zeros(pos.shape[:2])
    for i in range(count):
        for other in range(count):
            if other == i:
                continue
            hit = _distance(pos[:, other], pos[:, i]) < AGENT_SIZE + AGENT_SIZE
            reward[:, i] = reward[:, i] - 1.0 * hit
    return reward


def rewards(pos, landmarks):
    """SimpleEnv's mix: global * (1 - local_ratio) + agent's own * local_ratio."""
    shared = global_reward(pos, landmarks)[:, None]
    return shared * (1 - LOCAL_RATIO) + collision_penalty(pos) * LOCAL_RATIO


def observations(pos, vel, comm, landmarks):
    """float32[B, N, 4 + 2N + 2(N-1) + 2(N-1)]: each agent's [own vel, own pos, landmark
    positions relative to it, the other agents' relative positions, their comms]."""
    count = pos.shape[1]
    rows = []
    for i in range(count):
        others = [o for o in range(count) if o != i]
        parts = [vel[:, i], pos[:, i]]
        parts += [landmarks[:, j] - pos[:, i] for j in range(landmarks.shape[1])]
        parts += [pos[:, o] - pos[:, i] for o in others]
        parts += [comm[:, o] for o in others]
        rows.append(np.concatenate(parts, axis=-1))
    return np.stack(rows, axis=1).astype(np.float32)
