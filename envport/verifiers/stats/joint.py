"""Joint distributions of discrete components, as extra categorical columns.

Each component compared alone cannot see how components go together: a port that deals the
player's and the dealer's cards from one draw, or that moves an object landing on another
one cell over instead of drawing again, can match every component's distribution exactly
and still start from other states. So beside the components, two samples get:

- `joint[discrete]`: the whole tuple of discrete components as one category, when the
  reference takes few enough distinct tuples (FULL_CELLS) for the table to be filled;
- `joint[a ~ b]`: when the whole table is too large, each pair of discrete components as one
  category, for pairs whose table
  is small enough (PAIR_CELLS), at most MAX_PAIRS pairs (those with the most values first);
- `joint[hash]`: a hash of the whole tuple into HASH_BUCKETS cells, always: any difference
  between the joint distributions moves mass between buckets, whatever the number of tuples.

The codes are integers, so the comparison treats them as discrete components: chi-square on
the table (a port tuple the reference never drew goes to its own cell), with the design's
power and its share of the family's alpha. Which columns exist depends on the reference's
sample alone, so the pilot sample the design sizes n from gets the same ones.
"""

from __future__ import annotations

import hashlib
from itertools import combinations

import numpy as np

FULL_CELLS = 256
PAIR_CELLS = 144
MAX_PAIRS = 24
HASH_BUCKETS = 16
# A table's cell needs about this many reference draws for Pearson's chi-square to hold.
MIN_COUNT = 5


def joint_columns(
    reference: dict[str, np.ndarray], port: dict[str, np.ndarray], discrete: list[str]
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Name -> codes on each side for the joint columns of the `discrete` components (named
    in both samples; fewer than two: none)."""
    if len(discrete) < 2:
        return {}, {}
    ref_rows = _rows(reference, discrete)
    port_rows = _rows(port, discrete)
    ref_out: dict[str, np.ndarray] = {}
    port_out: dict[str, np.ndarray] = {}
    full = _coded(ref_rows, port_rows)
    if full is not None:
        ref_out["joint[discrete]"], port_out["joint[discrete]"] = full
    # With the whole table filled, the pairs' tables are its margins: nothing more to see.
    for a, b in _pairs(ref_rows, discrete) if full is None else []:
        pair = _coded(ref_rows[:, [a, b]], port_rows[:, [a, b]], PAIR_CELLS)
        if pair is not None:
            name = f"joint[{discrete[a]} ~ {discrete[b]}]"
            ref_out[name], port_out[name] = pair
    ref_out["joint[hash]"], port_out["joint[hash]"] = _hashed(ref_rows), _hashed(port_rows)
    return ref_out, port_out


def _rows(sample: dict[str, np.ndarray], names: list[str]) -> np.ndarray:
    # float64 holds every discrete value exactly (integers below 2**53, a float's few values);
    # +0.0 makes -0.0 and 0.0 one value, as the comparison of components does.
    columns = [np.asarray(sample[name]).reshape(-1).astype(np.float64) + 0.0 for name in names]
    return np.stack(columns, axis=1)


def _coded(
    ref_rows: np.ndarray, port_rows: np.ndarray, cells: int = FULL_CELLS
) -> tuple[np.ndarray, np.ndarray] | None:
    """Both sides' rows as indices of the common rows, those drawn at least MIN_COUNT times
    per side on average over both samples; rarer rows share one last cell, so no cell of the
    table is nearly empty (Pearson's statistic misleads there). Chosen from both samples
    together: chosen from the reference's alone, the cells it happened to draw often are
    kept and the ones it drew seldom pooled, and equal distributions would look different.
    None when there are fewer than two common rows, or more than `cells`."""
    both = np.concatenate([ref_rows, port_rows])
    distinct, codes, counts = np.unique(both, axis=0, return_inverse=True, return_counts=True)
    common = np.flatnonzero(counts >= 2 * MIN_COUNT)
    if len(common) < 2 or len(common) > cells:
        return None
    recode = np.full(len(distinct), len(common), dtype=np.int64)
    recode[common] = np.arange(len(common))
    coded = recode[codes.reshape(-1)]
    return coded[: len(ref_rows)], coded[len(ref_rows) :]


def _pairs(ref_rows: np.ndarray, names: list[str]) -> list[tuple[int, int]]:
    """The pairs to tabulate: both components varying, the table small enough; those with
    the most distinct values first (where a coupling has most room to show)."""
    counts = [len(np.unique(ref_rows[:, i])) for i in range(len(names))]
    pairs = [
        (a, b)
        for a, b in combinations(range(len(names)), 2)
        if counts[a] > 1 and counts[b] > 1 and counts[a] * counts[b] <= PAIR_CELLS
    ]
    pairs.sort(key=lambda pair: -counts[pair[0]] * counts[pair[1]])
    return pairs[:MAX_PAIRS]


def _hashed(rows: np.ndarray) -> np.ndarray:
    # blake2b, not Python's salted hash(): the same bucket on every run and in every process.
    return np.array(
        [
            int.from_bytes(hashlib.blake2b(row.tobytes(), digest_size=4).digest(), "little")
            % HASH_BUCKETS
            for row in rows
        ],
        dtype=np.int64,
    )
