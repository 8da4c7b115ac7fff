"""A simple_spread team for L3 that huddles: each agent pushes toward the team's centre
along its larger offset, with a little noise. Uniform play from U(-1, 1) starts seldom
brings agents within 0.3 of each other; huddling agents overlap most steps, so the
collision penalty (-1 per other agent overlapped, for each agent of a pair) and the soft
contact forces are played through every episode, two and three agents at once."""

from __future__ import annotations

from typing import Any

import numpy as np

AGENTS = ("agent_0", "agent_1", "agent_2")
NOISE = 0.2  # the share of agents' actions drawn uniformly instead


def huddle(state: dict[str, Any], rng: np.random.Generator) -> np.ndarray:
    """The joint action (one Discrete(5) action per agent, in agent order)."""
    positions = np.stack([np.asarray(state[f"p_pos.{a}"], dtype=np.float64) for a in AGENTS])
    centre = positions.mean(axis=0)
    actions = []
    for position in positions:
        offset = centre - position
        axis = int(np.argmax(np.abs(offset)))
        # 1 -x, 2 +x, 3 -y, 4 +y (SimpleEnv._set_action)
        toward = 1 + 2 * axis + int(offset[axis] > 0)
        actions.append(int(rng.integers(5)) if rng.random() < NOISE else toward)
    return np.asarray(actions, dtype=np.int64)
