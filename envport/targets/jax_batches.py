"""The shapes a JAX port's batches are run in: few shapes, so few compiles.

A JAX port compiles one program per input shape, seconds each (pgx's Seaquest step: about
five on a quiet 2-core machine), while running a bucket of rows takes milliseconds. So
step_batch requests of any size run as chunks of one bucket, the last one padded.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

# The rows of a step_batch request's compiled step: compiling the step costs far more than
# stepping this many rows of any env envport ports.
STEP_BUCKET = 512

Run = Callable[[dict[str, np.ndarray], np.ndarray, "np.ndarray | None"], dict[str, Any]]


def chunked(
    run: Run, states: dict[str, np.ndarray], actions: np.ndarray, noise: np.ndarray | None
) -> dict[str, Any]:
    """`run` (one bucket of rows, padded) over every STEP_BUCKET rows, its answers joined:
    the arrays by row, the compile and run times summed."""
    rows = actions.shape[0]
    answers = [
        run(
            {k: np.asarray(v)[start : start + STEP_BUCKET] for k, v in states.items()},
            actions[start : start + STEP_BUCKET],
            None if noise is None else noise[start : start + STEP_BUCKET],
        )
        for start in range(0, max(rows, 1), STEP_BUCKET)
    ]
    if len(answers) == 1:
        return answers[0]
    joined: dict[str, Any] = {
        key: np.concatenate([a[key] for a in answers])
        for key in ("obs", "reward", "terminated", "truncated")
    }
    joined["compile_s"] = sum(a["compile_s"] for a in answers)
    joined["run_s"] = sum(a["run_s"] for a in answers)
    if "state" in answers[0]:
        joined["state"] = {
            k: np.concatenate([a["state"][k] for a in answers]) for k in answers[0]["state"]
        }
    return joined


def pad_rows(
    states: dict[str, np.ndarray], actions: np.ndarray, noise: np.ndarray | None, shape: list[int]
) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray | None]:
    """Batch (and, for rollouts, time) axes grown to `shape` by repeating the last entry."""
    grow = [max(0, want - have) for want, have in zip(shape, actions.shape, strict=False)]

    def pad(array: np.ndarray, axes: int) -> np.ndarray:
        widths = [(0, g) for g in grow[:axes]] + [(0, 0)] * (array.ndim - axes)
        return np.pad(array, widths, mode="edge") if any(grow[:axes]) else array

    return (
        {k: pad(np.asarray(v), 1) for k, v in states.items()},
        pad(actions, len(grow)),
        None if noise is None else pad(noise, len(grow)),
    )
