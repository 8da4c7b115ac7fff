"""A Connect Four player for L3 that favours the centre, as people and engines do: it
reaches the diagonal and central lines a uniform player rarely completes."""

from __future__ import annotations

from typing import Any

import numpy as np

# Weights of the seven columns, highest in the middle.
WEIGHTS = np.array([1.0, 2.0, 4.0, 8.0, 4.0, 2.0, 1.0])


def centre(state: dict[str, Any], rng: np.random.Generator) -> int:
    """A legal column (one not yet full), drawn with the centre's weights."""
    heights = np.array([int(state[f"board.c{c}.length"]) for c in range(7)])
    weights = np.where(heights < 6, WEIGHTS, 0.0)
    if weights.sum() == 0:
        return int(rng.integers(7))
    return int(rng.choice(7, p=weights / weights.sum()))
