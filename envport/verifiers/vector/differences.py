"""How two sets of a VectorEnv's answers differ, call by call: the seeding checks'
comparison (bit for bit, NaN equal to NaN) and their divergence."""

from __future__ import annotations

from typing import Any

import numpy as np

from envport.verifiers.reporting.divergence import Divergence, FieldDiff


def differences(
    a: dict[str, np.ndarray], b: dict[str, np.ndarray], envs: np.ndarray | None
) -> list[FieldDiff]:
    diffs = []
    for key in sorted(set(a) | set(b)):
        left, right = a.get(key), b.get(key)
        if left is None or right is None or left.shape != right.shape:
            diffs.append(FieldDiff(field=key, expected=show(left), actual=show(right)))
            continue
        bad: list[int | None]
        if left.ndim == 0:
            same = np.array_equal(left, right, equal_nan=left.dtype.kind == "f")
            bad = [] if same else [None]
        else:
            rows = np.arange(len(left)) if envs is None else envs
            bad = [
                int(r)
                for r in rows
                if not np.array_equal(left[r], right[r], equal_nan=left.dtype.kind in "fc")
            ]
        if bad:
            r = bad[0]
            diffs.append(
                FieldDiff(
                    field=key if r is None else f"{key}[env {r}]",
                    expected=show(left if r is None else left[r]),
                    actual=show(right if r is None else right[r]),
                )
            )
    return diffs


def show(value: np.ndarray | None) -> Any:
    return None if value is None else np.asarray(value).tolist()


def divergence(message: str, diffs: list[FieldDiff], seed: int, replay: str) -> Divergence:
    return Divergence(
        level="l2", mode="vector", seed=seed, message=message, fields=diffs, replay=replay
    )
