"""Field-by-field comparison of a reference trajectory with a port's, with tolerances.

Discrete fields (integer or boolean) compare exactly; float fields use the spec's per-field
atol/rtol (DESIGN.md, contract 4).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from envport.spec import PortSpec
from envport.verifiers.divergence import FieldDiff


@dataclass
class Steps:
    """Outputs of L consecutive transitions: obs (L, ...), reward, terminated, truncated (L,)."""

    obs: np.ndarray
    reward: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray

    def head(self, length: int) -> Steps:
        return Steps(
            self.obs[:length],
            self.reward[:length],
            self.terminated[:length],
            self.truncated[:length],
        )


def obs_names(spec: PortSpec, size: int) -> list[str]:
    names = spec.observation.names
    if len(names) == size:
        return [f"obs.{n}" for n in names]
    return [f"obs[{i}]" for i in range(size)]


def contract_problems(expected_obs: np.ndarray, actual_obs: np.ndarray) -> list[FieldDiff]:
    """Observation dtype and shape must match the reference's (checked once per level)."""
    problems = []
    if actual_obs.dtype != expected_obs.dtype:
        problems.append(
            FieldDiff(
                field="obs.dtype", expected=str(expected_obs.dtype), actual=str(actual_obs.dtype)
            )
        )
    if actual_obs.shape[1:] != expected_obs.shape[1:]:
        problems.append(
            FieldDiff(
                field="obs.shape",
                expected=list(expected_obs.shape[1:]),
                actual=list(actual_obs.shape[1:]),
            )
        )
    return problems


def _columns(
    spec: PortSpec, expected: Steps, actual: Steps
) -> list[tuple[str, np.ndarray, np.ndarray]]:
    length = len(expected.reward)
    ref_obs = expected.obs.reshape(length, -1)
    port_obs = actual.obs.reshape(length, -1)
    columns = [
        (name, ref_obs[:, i], port_obs[:, i])
        for i, name in enumerate(obs_names(spec, ref_obs.shape[1]))
    ]
    columns += [
        ("reward", expected.reward, actual.reward),
        ("terminated", expected.terminated, actual.terminated),
        ("truncated", expected.truncated, actual.truncated),
    ]
    return columns


def first_divergence(
    spec: PortSpec, expected: Steps, actual: Steps, free_running: bool
) -> tuple[int, list[FieldDiff]] | None:
    """The first step at which any field differs beyond tolerance, with every differing field."""
    length = len(expected.reward)
    if length == 0:
        return None
    mismatches = []
    bounds = []
    for name, want, got in _columns(spec, expected, actual):
        exact = want.dtype.kind in "biu" and got.dtype.kind in "biu"
        if exact:
            bad = want != got
            bounds.append((0.0, 0.0))
        else:
            atol, rtol = spec.tolerance_for(name).bounds(free_running)
            want_f, got_f = want.astype(np.float64), got.astype(np.float64)
            bad = ~np.isclose(got_f, want_f, atol=atol, rtol=rtol, equal_nan=True)
            bounds.append((atol, rtol))
        mismatches.append(bad)
    table = np.stack(mismatches, axis=1)
    failing_steps = np.flatnonzero(table.any(axis=1))
    if failing_steps.size == 0:
        return None
    step = int(failing_steps[0])
    diffs = []
    for column, (name, want, got) in enumerate(_columns(spec, expected, actual)):
        if not table[step, column]:
            continue
        expected_value, actual_value = want[step].item(), got[step].item()
        exact = isinstance(expected_value, bool | int) and isinstance(actual_value, bool | int)
        atol, rtol = bounds[column]
        diffs.append(
            FieldDiff(
                field=name,
                expected=expected_value,
                actual=actual_value,
                difference=None if exact else abs(float(actual_value) - float(expected_value)),
                atol=None if exact else atol,
                rtol=None if exact else rtol,
            )
        )
    return step, diffs
