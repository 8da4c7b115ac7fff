"""The state a step leaves behind, compared with the reference's after the same step.

A port can match every observation, reward and ending and still leave a different state: a
timer the observation does not show (MinAtar Asterix's spawn timer and difficulty ramp)
shows only hundreds of steps later, past what a rollout plays. Wherever the port reads its
state back (`state_to_reference`), L1's transition check and L3's resync steps ask for
the state after each step in the same request as its outputs and compare it here, field by
field with the spec's tolerances; where it cannot, the check says it compared outputs only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from envport.gaps import Gap, GapKind
from envport.spec import PortSpec
from envport.targets.reference import State
from envport.verifiers.reporting.divergence import FieldDiff
from envport.verifiers.reporting.states import field_diffs

LABEL = "state."


def after_diffs(spec: PortSpec, expected: State, read: dict[str, Any], row: int) -> list[FieldDiff]:
    """Row `row` of the port's state read after a batch's step against the reference's
    state after the same step, named `state.<field>`."""
    actual = {k: np.asarray(v)[row] for k, v in read.items()}
    return field_diffs(spec, expected, actual, label=LABEL)


def candidate_rows(
    spec: PortSpec, expected: dict[str, np.ndarray], read: dict[str, Any], rows: np.ndarray
) -> np.ndarray:
    """Of `rows` (indices into both batches), those whose state may differ, found on whole
    arrays at once: exact for integers, for floats the loosest tolerance any component of
    the field has, so no row that `after_diffs` would fault is missed. A missing field or
    another shape makes every row a candidate (`after_diffs` names it)."""
    differs = np.zeros(len(rows), dtype=bool)
    for key, want_all in expected.items():
        got_all = read.get(key)
        if got_all is None:
            return rows
        want, got = np.asarray(want_all)[rows], np.asarray(got_all)[rows]
        if want.shape != got.shape or got.dtype.kind not in "biuf":
            return rows
        want, got = want.reshape(len(rows), -1), got.reshape(len(rows), -1)
        if want.dtype.kind in "biu" and got.dtype.kind in "biu":
            differs |= (want != got).any(axis=1)
            continue
        atol, rtol = _loosest(spec, key)
        wide_want, wide_got = want.astype(float), got.astype(float)
        close = np.isclose(wide_got, wide_want, atol=atol, rtol=rtol, equal_nan=True)
        differs |= ~close.all(axis=1)
    return rows[differs]


def _loosest(spec: PortSpec, key: str) -> tuple[float, float]:
    names = [key, *(name for name in spec.tolerance if name.startswith(f"{key}["))]
    bounds = [spec.tolerance_for(name).bounds(free_running=False) for name in names]
    return max(b[0] for b in bounds), max(b[1] for b in bounds)


def outputs_only(check: str) -> Gap:
    """The gap of a check whose port cannot read its state back."""
    return Gap(
        check=check,
        kind=GapKind.NO_STATE_READS,
        detail="the port has no `state_to_reference`, so the state a step leaves behind is "
        "never compared; only observations, rewards and endings are (a timer the "
        "observation does not show goes unchecked)",
    )
