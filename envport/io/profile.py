"""Where one verify's wall time goes: per check, per phase, with counters for its progress.

`verify` makes one `Profile`, makes it the active one while it runs and opens a section per
check (`Profile.check`). The places that spend the time say so: the reference adapter
(`phase("reference")`), the port worker's client (`request`, per op with its bytes), the
draws (`phase("drawing")`), the judging (`phase("judging")`). A phase nested in another is
taken out of the outer one's time, so the phases of a check add up to at most its wall time;
the rest is the harness's own work ("other").

The active profile is module state rather than an argument because the reference and the
worker are called from every level, many layers down; a run with no profile (a test, a
translate's module check) pays for one `None` check per call. Only the thread that opened
the profile is timed: L3's extra lanes wait in threads of their own, overlapping the main
thread's time, and adding theirs would count the same wall time twice. Their counters
(episodes) still count: progress is progress, whichever thread made it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import Any

_NOTHING = nullcontext()

# Every section's phases, zero when a check spent nothing there (a reader, a script, finds
# the same keys in each): the reference's calls (those made under branch coverage's tracer
# apart), the wait on the port worker, Hypothesis's draws (the spec's `state.valid` on each
# drawn state apart), the comparisons, the rest.
PHASES = ("reference", "reference_traced", "worker", "drawing", "validity", "judging", "other")


@dataclass
class Requests:
    """One op's requests to the port worker within a check: how many, the time spent waiting
    on their answers, the first one's wait (a compiling backend compiles there) and bytes."""

    count: int = 0
    seconds: float = 0.0
    first_seconds: float | None = None
    sent_bytes: int = 0
    received_bytes: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "seconds": round(self.seconds, 6),
            "first_seconds": None if self.first_seconds is None else round(self.first_seconds, 6),
            "sent_bytes": self.sent_bytes,
            "received_bytes": self.received_bytes,
        }


@dataclass
class CheckProfile:
    """One check's time: its wall time, its phases' exclusive times, its worker requests by
    op, and its progress (counts by unit, against `budget` of `unit` when it has one)."""

    name: str
    unit: str | None = None
    budget: int | None = None
    label: str = ""
    started: float = 0.0
    seconds: float = 0.0
    phases: dict[str, float] = field(default_factory=dict)
    requests: dict[str, Requests] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    # Seconds the port itself reported (JAX's compile time in L3's answers): inside the
    # worker's wait, shown beside it, not added to the phases.
    reported: dict[str, float] = field(default_factory=dict)
    passed: bool | None = None

    @property
    def done(self) -> int:
        return self.counts.get(self.unit, 0) if self.unit else 0

    def elapsed(self) -> float:
        return self.seconds or time.perf_counter() - self.started

    def other(self) -> float:
        """The wall time no phase claimed: the harness's own work between them."""
        worker = sum(r.seconds for r in self.requests.values())
        return max(0.0, self.seconds - sum(self.phases.values()) - worker)

    def to_json(self) -> dict[str, Any]:
        worker = sum(r.seconds for r in self.requests.values())
        phases = dict.fromkeys(PHASES, 0.0)
        phases |= {name: round(s, 6) for name, s in self.phases.items()}
        phases |= {"worker": round(worker, 6), "other": round(self.other(), 6)}
        return {
            "seconds": round(self.seconds, 6),
            "phases": phases,
            "requests": {op: r.to_json() for op, r in sorted(self.requests.items())},
            "port_reported": {k: round(v, 6) for k, v in sorted(self.reported.items())},
            "counts": dict(sorted(self.counts.items())),
            "unit": self.unit,
            "budget": self.budget,
        }


class _Phase:
    """A timed span: its own time goes to its phase, less that of the phases inside it."""

    __slots__ = ("inner", "name", "profile", "started")

    def __init__(self, profile: Profile, name: str) -> None:
        self.profile, self.name = profile, name
        self.inner = 0.0
        self.started = 0.0

    def __enter__(self) -> None:
        self.started = time.perf_counter()
        self.profile._stack.append(self)

    def __exit__(self, *exc: object) -> None:
        spent = time.perf_counter() - self.started
        profile = self.profile
        stack = profile._stack
        stack.pop()
        section = profile.current
        if section is not None:
            phases = section.phases
            phases[self.name] = phases.get(self.name, 0.0) + spent - self.inner
        if stack:
            stack[-1].inner += spent


class Profile:
    """One verify run's profile: its checks' sections, in the order they ran."""

    def __init__(self) -> None:
        self.checks: dict[str, CheckProfile] = {}
        self.current: CheckProfile | None = None
        self._stack: list[_Phase] = []
        self._owner = threading.get_ident()
        self._ops_seen: set[str] = set()
        # Told when a check begins and ends (the progress display).
        self.on_begin: Callable[[CheckProfile], None] | None = None
        self.on_end: Callable[[CheckProfile], None] | None = None

    def begin(
        self, name: str, unit: str | None = None, budget: int | None = None, label: str = ""
    ) -> CheckProfile:
        """Open check `name`'s section: from now on the time spent goes to it. `unit`: the
        counter its progress is read from, shown as `label`, out of `budget` if known."""
        section = CheckProfile(name, unit, budget, label or unit or "")
        self.checks[name] = section
        section.started = time.perf_counter()
        self.current, self._stack = section, []
        if self.on_begin is not None:
            self.on_begin(section)
        return section

    def end(self, passed: bool | None = None) -> None:
        """Close the open section (a check that ran to its end, with its verdict)."""
        section = self.current
        if section is None:
            return
        section.seconds = time.perf_counter() - section.started
        section.passed = passed
        self.current = None
        if self.on_end is not None:
            self.on_end(section)

    def cut(self) -> None:
        """Close the open section without a verdict (a check a port's error stopped): its
        time so far stays in the profile; the display is not told it ended."""
        section = self.current
        if section is not None:
            section.seconds = time.perf_counter() - section.started
            self.current = None

    def _timed(self) -> bool:
        return self.current is not None and threading.get_ident() == self._owner

    def phase(self, name: str) -> AbstractContextManager[None]:
        return _Phase(self, name) if self._timed() else _NOTHING

    def request(self, op: str, seconds: float, sent: int, received: int) -> None:
        """One answered request to the port worker: the wait for it and its bytes."""
        if not self._timed():
            return
        assert self.current is not None
        found = self.current.requests.setdefault(op, Requests())
        found.count += 1
        found.seconds += seconds
        found.sent_bytes += sent
        found.received_bytes += received
        if op not in self._ops_seen:
            self._ops_seen.add(op)
            found.first_seconds = seconds
        if self._stack:
            self._stack[-1].inner += seconds

    def tick(self, unit: str, count: int = 1) -> None:
        section = self.current
        if section is not None:
            section.counts[unit] = section.counts.get(unit, 0) + count

    def to_json(self) -> dict[str, Any]:
        return {name: section.to_json() for name, section in self.checks.items()}


_active: Profile | None = None


@contextmanager
def active(profile: Profile) -> Iterator[Profile]:
    """Make `profile` the one the reference, the worker and the draws report to."""
    global _active
    previous, _active = _active, profile
    try:
        yield profile
    finally:
        _active = previous


def phase(name: str) -> AbstractContextManager[None]:
    """Time a span as `name` in the active profile (nothing when there is none). Called
    on every reference step: kept to one test and one small object."""
    profile = _active
    if profile is None or profile.current is None or threading.get_ident() != profile._owner:
        return _NOTHING
    return _Phase(profile, name)


def request(op: str, seconds: float, sent: int, received: int) -> None:
    profile = _active
    if profile is not None:
        profile.request(op, seconds, sent, received)


def tick(unit: str, count: int = 1) -> None:
    profile = _active
    if profile is not None:
        profile.tick(unit, count)
