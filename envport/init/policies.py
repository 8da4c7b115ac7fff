"""Action policies for exploring an env: uniform, sticky (repeat the last action with
probability 0.8) and biased (one favoured action 90% of the time for a discrete space;
bang-bang at the box's corners, switching 10% of steps, for a continuous one). The verifier's
L3 plays the same three kinds (envport.verifiers.draws.policies), so the reachable states measured
here are the states L3 will visit."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from gymnasium import spaces

Policy = Callable[[np.random.Generator], Any]

STICKY = 0.8
FAVOURED = 0.9
SWITCH = 0.1


def _box_limits(space: spaces.Box) -> tuple[np.ndarray, np.ndarray]:
    # An unbounded side has no extreme to drive at: +-1 stands for it.
    low = np.where(np.isfinite(space.low), space.low, -1.0)
    high = np.where(np.isfinite(space.high), space.high, 1.0)
    return low, high


def uniform(space: Any) -> Policy:
    if isinstance(space, spaces.Discrete):
        start, n = int(space.start), int(space.n)
        return lambda rng: start + int(rng.integers(n))
    if isinstance(space, spaces.Box):
        low, high = _box_limits(space)
        return lambda rng: rng.uniform(low, high).astype(space.dtype)
    space.seed(0)
    return lambda rng: space.sample()


def sticky(space: Any) -> Policy:
    draw = uniform(space)
    last: list[Any] = []

    def act(rng: np.random.Generator) -> Any:
        if not last or rng.random() >= STICKY:
            last[:] = [draw(rng)]
        return last[0]

    return act


def biased(space: Any, episode: int) -> Policy:
    """Episode `episode` favours one action (cycling through the discrete actions) or drives
    a box action bang-bang between its corners."""
    draw = uniform(space)
    if isinstance(space, spaces.Discrete):
        favoured = int(space.start) + episode % int(space.n)
        return lambda rng: favoured if rng.random() < FAVOURED else draw(rng)
    if isinstance(space, spaces.Box):
        low, high = _box_limits(space)
        side = [np.random.default_rng(episode).random(space.shape) < 0.5]

        def bang(rng: np.random.Generator) -> Any:
            flip = rng.random(space.shape) < SWITCH
            side[0] = np.where(flip, ~side[0], side[0])
            return np.where(side[0], high, low).astype(space.dtype)

        return bang
    return sticky(space)


def mix(space: Any, episode: int) -> tuple[str, Policy]:
    """The policy of episode `episode`: the three kinds in turn."""
    kind = ("uniform", "sticky", "biased")[episode % 3]
    if kind == "uniform":
        return kind, uniform(space)
    if kind == "sticky":
        return kind, sticky(space)
    return kind, biased(space, episode // 3)
