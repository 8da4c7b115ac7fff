"""simple_tag's rewards and observations (mpe2's `mpe2.simple_tag.simple_tag`), for one
world, in float32."""

import jax.numpy as jnp

from .physics import AGENT_SIZE, AGENTS

ADVERSARIES = 3
RUNNER = AGENTS - 1  # agent_0, the one good agent
CAPTURE = 10.0
WIDTH = 16  # the longest observation (an adversary's); the runner's 14 are padded to it


def caught(pos):
    """bool[3]: adversary i touches the runner (Scenario.is_collision: closer than the two
    sizes' sum)."""
    dist = jnp.sqrt(jnp.sum(jnp.square(pos[RUNNER] - pos[:ADVERSARIES]), axis=-1))
    return dist < AGENT_SIZE[RUNNER] + AGENT_SIZE[:ADVERSARIES]


def bound(x):
    """agent_reward's penalty for leaving the screen along one axis, x = |position|."""
    return jnp.where(
        x < 0.9, 0.0, jnp.where(x < 1.0, (x - 0.9) * 10, jnp.minimum(jnp.exp(2 * x - 2), 10.0))
    )


def rewards(pos):
    """float32[4]: every adversary +10 for each adversary touching the runner (all of them:
    adversary_reward sums over every pair); the runner -10 for each, minus its boundary
    penalty along each axis."""
    touches = jnp.sum(caught(pos)).astype(jnp.float32) * CAPTURE
    runner = -touches - jnp.sum(bound(jnp.abs(pos[RUNNER])))
    return jnp.concatenate([jnp.full(ADVERSARIES, touches), runner[None]]).astype(jnp.float32)


def observations(pos, vel, obstacles):
    """float32[4, 16]: each agent's [own vel, own pos, obstacles relative to it, the other
    agents' relative positions, the runner's velocity (adversaries only)], the runner's 14
    padded with zeros to 16."""
    rows = []
    for i in range(AGENTS):
        others = [o for o in range(AGENTS) if o != i]
        parts = [vel[i], pos[i], (obstacles - pos[i]).reshape(-1)]
        parts += [pos[o] - pos[i] for o in others]
        parts += [vel[o] for o in others if o == RUNNER]
        row = jnp.concatenate(parts)
        rows.append(jnp.pad(row, (0, WIDTH - row.shape[0])))
    return jnp.stack(rows).astype(jnp.float32)
