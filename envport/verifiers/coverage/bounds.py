"""Bounds coverage: how many of the states L3's reference visits lie outside `[state.bounds]`.

The spec's bounds are where L1 and L2 draw states. A state that real play reaches outside
them is never tested at L1 or L2: only L3's episodes meet it, and only as often as they
happen to. Hand-chosen bounds are often too narrow (Pendulum's angle winds far past two
turns under random torques), so while L3 plays, every reference state is checked against
the bounds and the share outside is reported per field: a warning above `WARN_SHARE`, a
failed check with `--strict-bounds`.

A state is outside for a field when any of its elements is below `low`, above `high` or not
a number; it is outside overall when it is outside for any field. Counting is vectorised
over the played columns (one comparison per field per chunk) and adds up across lanes.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np

from envport.spec import PortSpec
from envport.verifiers.reporting.divergence import LevelResult

# Above this share of visited states outside a field's bounds, the bounds leave a real part
# of the reachable state space untested at L1/L2.
WARN_SHARE = 0.01
# Elements of a field shown one by one in a warning; a larger field is shown as one range.
MAX_SHOWN = 8
MEANING = (
    "the spec's bounds are where L1/L2 draw states; reachable states outside them are "
    "never tested at L1/L2"
)


@dataclass
class FieldCount:
    low: np.ndarray
    high: np.ndarray
    outside: int = 0
    # Per element, the smallest and largest value visited (NaN until a state is seen).
    reached_low: np.ndarray | None = None
    reached_high: np.ndarray | None = None


@dataclass
class Coverage:
    """Counts over every chunk L3 plays; `add` may be called from several lanes' threads."""

    fields: dict[str, FieldCount]
    states: int = 0
    outside: int = 0
    episodes: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def of(cls, spec: PortSpec) -> Coverage:
        return cls(
            {
                name: FieldCount(np.asarray(bound.low, float), np.asarray(bound.high, float))
                for name, bound in spec.state.bounds.items()
            }
        )

    def add(self, states: dict[str, np.ndarray], episodes: int = 0) -> None:
        """Count the rows of played columns (field -> [N, ...], the states of `episodes`
        episodes) against the bounds."""
        counts: dict[str, tuple[int, np.ndarray, np.ndarray]] = {}
        any_outside: np.ndarray | None = None
        rows = len(next(iter(states.values()))) if states else 0
        for name, count in self.fields.items():
            if name not in states:
                continue
            values = np.asarray(states[name])
            if not rows or values.ndim == 0 or values.dtype.kind not in "biuf":
                continue  # an object or string field has no order to bound
            values = values.astype(np.float64, copy=False)
            flat = values.reshape(rows, -1)
            try:
                low = np.broadcast_to(count.low, values.shape[1:]).reshape(-1)
                high = np.broadcast_to(count.high, values.shape[1:]).reshape(-1)
            except ValueError:
                continue  # a bound shaped unlike the field: L1 says so when it draws
            # Written as "not within" so that NaN counts as outside.
            out = ~((flat >= low) & (flat <= high))
            row_out: np.ndarray = np.asarray(out.any(axis=1))
            any_outside = row_out if any_outside is None else any_outside | row_out
            # fmin/fmax skip NaN (a NaN is counted above, not as an extreme).
            counts[name] = (int(row_out.sum()), np.fmin.reduce(flat), np.fmax.reduce(flat))
        with self._lock:
            self.episodes += episodes
            self.states += rows
            self.outside += 0 if any_outside is None else int(any_outside.sum())
            for name, (outside, lowest, highest) in counts.items():
                count = self.fields[name]
                count.outside += outside
                count.reached_low = _extreme(np.fmin, count.reached_low, lowest)
                count.reached_high = _extreme(np.fmax, count.reached_high, highest)

    def absorb(self, other: Coverage) -> None:
        """Add another count's states (a chunk counted on another process or node)."""
        with self._lock:
            self.episodes += other.episodes
            self.states += other.states
            self.outside += other.outside
            for name, theirs in other.fields.items():
                count = self.fields[name]
                count.outside += theirs.outside
                for side, extreme in (("reached_low", np.fmin), ("reached_high", np.fmax)):
                    if getattr(theirs, side) is not None:
                        mine = getattr(count, side)
                        setattr(count, side, _extreme(extreme, mine, getattr(theirs, side)))

    # A lock cannot be pickled: a chunk's count travels between processes without one.
    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "_lock"}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def share(self, name: str) -> float:
        return self.fields[name].outside / self.states if self.states else 0.0

    def over(self) -> list[str]:
        """The fields whose share outside their bounds is above `WARN_SHARE`."""
        return [name for name in self.fields if self.share(name) > WARN_SHARE]

    def statistics(self) -> dict:
        return {
            "states": self.states,
            "outside": self.outside,
            "share": self.outside / self.states if self.states else 0.0,
            "warn_share": WARN_SHARE,
            "fields": {
                name: {
                    "outside": count.outside,
                    "share": self.share(name),
                    "low": count.low.tolist(),
                    "high": count.high.tolist(),
                    "reached_low": _listed(count.reached_low),
                    "reached_high": _listed(count.reached_high),
                }
                for name, count in self.fields.items()
            },
        }

    def warnings(self) -> list[str]:
        """One line per field above the warning share: what, how much, what was reached."""
        lines = []
        for name in self.over():
            count = self.fields[name]
            lines.append(
                f"state.bounds.{name}: {self.share(name):.1%} of the {self.states} states L3's "
                f"reference visited lie outside {ranges(count.low, count.high)} (reached "
                f"{ranges(count.reached_low, count.reached_high)}), and L1/L2 never test "
                "them: widen the bounds to what play reaches (--strict-bounds fails on this)"
            )
        return lines

    def level(self, strict: bool) -> LevelResult:
        """The coverage as a check: it passes unless `strict` and a field is above the share."""
        over = self.over()
        shares = ", ".join(f"{name} {self.share(name):.2%}" for name in self.fields)
        note = (
            f"{self.outside} of {self.states} reference states outside state.bounds "
            f"({shares}); {MEANING}"
        )
        if over:
            note += f"; above {WARN_SHARE:.0%}: {', '.join(over)}"
            if strict:
                note += " (--strict-bounds)"
        return LevelResult(
            level="l3",
            mode="bounds",
            passed=not (strict and over),
            episodes=self.episodes,
            steps_compared=self.states,
            statistics=self.statistics(),
            note=note,
        )


def _extreme(pick: np.ufunc, old: np.ndarray | None, new: np.ndarray) -> np.ndarray:
    return new if old is None else pick(old, new)


def _listed(values: np.ndarray | None) -> list[float] | None:
    return None if values is None else [float(v) for v in values]


def ranges(low: np.ndarray | None, high: np.ndarray | None) -> str:
    """Per element `[low, high]`, joined by ` x `: `[-7, 7] x [-9, 9]`."""
    if low is None or high is None:
        return "nothing"
    lows, highs = np.broadcast_arrays(np.asarray(low), np.asarray(high))
    if lows.size > MAX_SHOWN:  # a grid or an image: its overall range says enough
        return f"[{lows.min():.4g}, {highs.max():.4g}] over {lows.size} elements"
    return " x ".join(
        f"[{lo:.4g}, {hi:.4g}]" for lo, hi in zip(lows.reshape(-1), highs.reshape(-1), strict=True)
    )
