"""simple_spread's rewards and observations (mpe2's `mpe2.simple_spread.simple_spread`, with
SimpleEnv's `local_ratio` mixing), for one world, in float32."""

import jax.numpy as jnp

from .physics import AGENT_SIZE, pair_distances

LOCAL_RATIO = 0.5


def global_reward(pos, landmarks):
    """-(sum over landmarks of the closest agent's distance): float32 scalar."""
    dists = jnp.sqrt(jnp.sum(jnp.square(pos[:, None, :] - landmarks[None, :, :]), axis=-1))
    return -jnp.sum(jnp.min(dists, axis=0))


def collision_penalty(pos):
    """float32[N]: -1 for every other agent an agent overlaps (dist < the sizes' sum); a
    pair that touches costs both of its agents."""
    count = pos.shape[0]
    _, dist = pair_distances(pos)
    others = ~jnp.eye(count, dtype=bool)
    hit = (dist < AGENT_SIZE + AGENT_SIZE) & others
    return -jnp.sum(hit, axis=1).astype(jnp.float32)


def rewards(pos, landmarks):
    """SimpleEnv's mix: global * (1 - local_ratio) + agent's own * local_ratio."""
    shared = global_reward(pos, landmarks)
    return shared * (1 - LOCAL_RATIO) + collision_penalty(pos) * LOCAL_RATIO


def observations(pos, vel, comm, landmarks):
    """float32[N, 4 + 2N + 2(N-1) + 2(N-1)]: each agent's [own vel, own pos, landmark
    positions relative to it, the other agents' relative positions, their comms]."""
    count = pos.shape[0]
    rows = []
    for i in range(count):
        others = [o for o in range(count) if o != i]
        parts = [vel[i], pos[i], (landmarks - pos[i]).reshape(-1)]
        parts += [pos[o] - pos[i] for o in others]
        parts += [comm[o] for o in others]
        rows.append(jnp.concatenate(parts))
    return jnp.stack(rows).astype(jnp.float32)
