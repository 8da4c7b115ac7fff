"""Chaos: where two free-running runs of the reference itself part. One run keeps its
float64 state; the other has its float state rounded to float32 after every step, as a
float32 port stores it. Both play the same actions from the same start; the step at which
any float field first differs by more than the free-running tolerance (or the episodes end
differently) is where a correct float32 port may part from the reference too."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from envport.init.policies import mix
from envport.targets.reference import Reference, State


@dataclass
class Chaos:
    episodes: int
    parted: int  # episodes whose runs parted
    first: int | None  # the earliest step at which a pair parted


def _round32(state: State) -> State:
    return {
        k: (v.astype(np.float32).astype(v.dtype) if v.dtype.kind == "f" else v)
        for k, v in state.items()
    }


def _apart(a: State, b: State, atol: float, rtol: float) -> bool:
    for name, x in a.items():
        if x.dtype.kind == "f" and not np.allclose(b[name], x, atol=atol, rtol=rtol):
            return True
    return False


def measure(
    wide: Reference, narrow: Reference, episodes: int, limit: int, atol: float, rtol: float
) -> Chaos:
    rng = np.random.default_rng(11)
    parted, first = 0, None
    for episode in range(episodes):
        _, policy = mix(wide.action_space, episode)
        wide.reset(seed=episode)
        narrow.reset(seed=episode)
        narrow.write_state(_round32(wide.read_state()))
        for step in range(1, limit + 1):
            action = policy(rng)
            a, b = wide.step(action), narrow.step(action)
            narrow.write_state(_round32(narrow.read_state()))
            ended = (a.terminated or a.truncated, b.terminated or b.truncated)
            if ended[0] != ended[1] or _apart(wide.read_state(), narrow.read_state(), atol, rtol):
                parted += 1
                first = step if first is None else min(first, step)
                break
            if ended[0]:
                break
    return Chaos(episodes, parted, first)


def horizon(chaos: Chaos) -> int | None:
    """Half the earliest parting step, rounded down to a multiple of 10 (at least 10): the
    margin the examples keep (Acrobot parts at 184, compared for 100; Pendulum 88, 50)."""
    if chaos.first is None:
        return None
    return max(10, (chaos.first // 2) // 10 * 10)
