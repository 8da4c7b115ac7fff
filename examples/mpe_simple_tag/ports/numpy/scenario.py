"""simple_tag's rewards and observations (mpe2's `mpe2.simple_tag.simple_tag`), for B worlds
at once, in the reference's order of operations (its rewards bit for bit)."""

import numpy as np

from .physics import ADVERSARIES, AGENT_SIZE, AGENTS

CAPTURE = 10.0
RUNNER = AGENTS - 1  # agent_0, the one good agent


def _distance(a, b):
    return np.sqrt(np.sum(np.square(a - b), axis=-1))


def caught(pos):
    """bool[B, 3]: adversary i touches the runner (Scenario.is_collision: closer than the
    two sizes' sum)."""
    return np.stack(
        [
            _distance(pos[:, RUNNER], pos[:, i]) < AGENT_SIZE[RUNNER] + AGENT_SIZE[i]
            for i in range(ADVERSARIES)
        ],
        axis=1,
    )


def bound(x):
    """agent_reward's penalty for leaving the screen along one axis, x = |position|."""
    with np.errstate(over="ignore"):
        return np.where(
            x < 0.9, 0.0, np.where(x < 1.0, (x - 0.9) * 10, np.minimum(np.exp(2 * x - 2), 10))
        )


def rewards(pos):
    """float64[B, 4]: every adversary +10 for each adversary touching the runner (all of
    them, not only itself: adversary_reward sums over every pair); the runner -10 for each,
    then minus its boundary penalty along x, then along y."""
    hits = caught(pos)
    out = np.zeros(pos.shape[:2])
    shared = np.zeros(pos.shape[0])
    for i in range(ADVERSARIES):
        shared = shared + CAPTURE * hits[:, i]
    out[:, :ADVERSARIES] = shared[:, None]
    runner = np.zeros(pos.shape[0])
    for i in range(ADVERSARIES):
        runner = runner - CAPTURE * hits[:, i]
    for axis in range(2):
        runner = runner - bound(np.abs(pos[:, RUNNER, axis]))
    out[:, RUNNER] = runner
    return out


def observations(pos, vel, obstacles):
    """float32[B, 4, 16]: each agent's [own vel, own pos, obstacles relative to it, the other
    agents' relative positions, the runner's velocity (adversaries only)]. The runner's
    observation is 14 long; its row is padded with zeros to 16."""
    rows = []
    for i in range(AGENTS):
        others = [o for o in range(AGENTS) if o != i]
        parts = [vel[:, i], pos[:, i]]
        parts += [obstacles[:, j] - pos[:, i] for j in range(obstacles.shape[1])]
        parts += [pos[:, o] - pos[:, i] for o in others]
        parts += [vel[:, o] for o in others if o == RUNNER]
        row = np.concatenate(parts, axis=-1)
        rows.append(np.pad(row, ((0, 0), (0, 16 - row.shape[1]))))
    return np.stack(rows, axis=1).astype(np.float32)
