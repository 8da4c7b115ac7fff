"""The values around an L3 divergence, kept for plots: reference and port, step by step.

A divergence report names the first differing step; a reader wants to see whether the
port drifted away slowly or jumped, so the report keeps the differing fields over the
steps before it (and a few after), compactly: a window, not the whole episode.
"""

from __future__ import annotations

import numpy as np

from envport.spec import PortSpec
from envport.verifiers.reporting.compare import Steps, obs_names, reward_names
from envport.verifiers.reporting.divergence import FieldDiff, FieldSeries

# Steps kept before and after the divergence: enough to see drift, small enough for a journal.
BEFORE = 100
AFTER = 10
MAX_FIELDS = 4


def _column(spec: PortSpec, steps: Steps, name: str) -> np.ndarray | None:
    if name in ("reward", "terminated", "truncated"):
        return np.asarray(getattr(steps, name))
    reward = np.asarray(steps.reward)
    if reward.ndim == 2 and name in (players := reward_names(spec, reward.shape[1])):
        return reward[:, players.index(name)]
    flat = np.asarray(steps.obs).reshape(len(steps.reward), -1)
    names = obs_names(spec, flat.shape[1])
    return flat[:, names.index(name)] if name in names else None


def field_series(
    spec: PortSpec,
    expected: Steps,
    actual: Steps,
    index: int,
    segment: tuple[int, int],
    diffs: list[FieldDiff],
) -> list[FieldSeries]:
    """Reference and port values of each differing field around joined-step `index`.

    `segment` is the episode's [start, end) in the joined steps, so the window never runs
    into a neighbouring episode.
    """
    start, end = segment
    low, high = max(start, index - BEFORE), min(end, index + AFTER + 1)
    series = []
    for diff in diffs[:MAX_FIELDS]:
        want, got = _column(spec, expected, diff.field), _column(spec, actual, diff.field)
        if want is None or got is None or got.dtype.kind not in "biuf":
            continue  # dtype and shape problems have no values to plot
        series.append(
            FieldSeries(
                field=diff.field,
                first_step=low - start,
                reference=want[low:high].tolist(),
                port=got[low:high].tolist(),
            )
        )
    return series
