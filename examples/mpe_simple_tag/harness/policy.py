"""A simple_tag game for L3 where capture happens: the three adversaries chase the runner
along their larger offset to it, and the runner wanders, fleeing the nearest adversary now
and then. Uniform play from U(-1, 1) starts seldom brings an adversary within 0.125 of the
runner (the capture distance, the two sizes' sum); chasing adversaries catch it in most
episodes (measured from mpe2's resets 0-39: 30 of 40 episodes, 97 steps in capture, 4 of
them with two adversaries touching), so the +10 / -10 capture rewards and the contact
forces between agents are played through, and the wandering runner crosses 0.9 from the
centre, where its boundary penalty starts (34 of the 40). A runner fleeing half the time
outruns them (13 of 40): it is faster."""

from __future__ import annotations

from typing import Any

import numpy as np

ADVERSARIES = ("adversary_0", "adversary_1", "adversary_2")
RUNNER = "agent_0"
NOISE = 0.2  # the share of adversaries' actions drawn uniformly instead
FLEEING = 0.15  # the share of the runner's actions that flee


def _toward(offset: np.ndarray) -> int:
    """The Discrete action pushing along `offset`'s larger axis (SimpleEnv._set_action:
    1 -x, 2 +x, 3 -y, 4 +y)."""
    axis = int(np.argmax(np.abs(offset)))
    return 1 + 2 * axis + int(offset[axis] > 0)


def chase(state: dict[str, Any], rng: np.random.Generator) -> np.ndarray:
    """The joint action (one Discrete(5) action per agent, adversaries then the runner)."""
    runner = np.asarray(state[f"p_pos.{RUNNER}"], dtype=np.float64)
    chasers = [np.asarray(state[f"p_pos.{a}"], dtype=np.float64) for a in ADVERSARIES]
    actions = [
        int(rng.integers(5)) if rng.random() < NOISE else _toward(runner - position)
        for position in chasers
    ]
    nearest = min(chasers, key=lambda position: float(np.hypot(*(runner - position))))
    actions.append(_toward(runner - nearest) if rng.random() < FLEEING else int(rng.integers(5)))
    return np.asarray(actions, dtype=np.int64)
