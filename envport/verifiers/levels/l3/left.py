"""L3 resync's state after each step: what the step left behind, beside what it returned.

A resync step starts from the reference's recorded state, and the state the reference had
before the episode's next step is the state this step should leave (reporting/after.py):
so every resync step but an episode's last is also compared by state, from the same
answer, no request of its own. Free-running compares outputs only; its every step is also
a resync step, where the state is compared.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from envport.spec import PortSpec
from envport.verifiers.levels.l3.played import Played
from envport.verifiers.reporting.after import after_diffs, candidate_rows
from envport.verifiers.reporting.divergence import FieldDiff

Found = list[tuple[int, list[FieldDiff]]]


def joined(reads: list[dict[str, Any] | None]) -> dict[str, np.ndarray] | None:
    """Chunks' state reads as one, or None when any chunk read none."""
    if not reads or any(read is None for read in reads):
        return None
    present = [read for read in reads if read is not None]
    return {k: np.concatenate([np.asarray(read[k]) for read in present]) for k in present[0]}


def state_divergences(spec: PortSpec, played: Played, read: dict[str, Any]) -> Found:
    """For each episode whose state after some step differs: its first such step and the
    fields differing there (as `divergent_steps` answers for outputs)."""
    ends = played.ends
    rows = np.setdiff1d(np.arange(played.transitions), ends)
    if rows.size == 0:
        return []
    expected = {k: np.asarray(v)[rows + 1] for k, v in played.states.items()}
    mine = {k: np.asarray(v)[rows] for k, v in read.items()}
    suspects = rows[candidate_rows(spec, expected, mine, np.arange(len(rows)))]
    starts = played.starts
    found: dict[int, tuple[int, list[FieldDiff]]] = {}
    for row in suspects.tolist():
        episode = int(np.searchsorted(starts, row, side="right") - 1)
        if episode in found:
            continue
        diffs = after_diffs(spec, played.state_at(row + 1), read, row)
        if diffs:
            found[episode] = (row, diffs)
    return [found[e] for e in sorted(found)]


def earliest(outputs: Found, states: Found, starts: np.ndarray) -> Found:
    """Per episode, the first step where outputs or state differ (both at one step: their
    fields together, outputs first)."""
    by_episode: dict[int, tuple[int, list[FieldDiff]]] = {}
    for row, diffs in [*outputs, *states]:
        episode = int(np.searchsorted(starts, row, side="right") - 1)
        kept = by_episode.get(episode)
        if kept is None or row < kept[0]:
            by_episode[episode] = (row, diffs)
        elif row == kept[0]:
            by_episode[episode] = (row, [*kept[1], *diffs])
    return [by_episode[e] for e in sorted(by_episode)]
