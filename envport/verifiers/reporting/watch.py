"""What a person sees while `envport verify` runs: its checks as they go and as they end.

The display watches the run's profile (envport.io.profile): a check's section opening and
closing, and its progress counter. On a terminal, a line redrawn in place names the running
check, its count out of its budget and an estimate of the time left; off a terminal, a log
or a CI job gets one line per check as it ends. Both go to stderr, so stdout (the report)
stays the report. After Ctrl-C, `interrupted` prints what had finished.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from types import TracebackType

from rich.console import Console
from rich.live import Live
from rich.text import Text

from envport.io.profile import CheckProfile, Profile

# A check's section that is the run's own start-up, not a check a person asked for.
SETUP = "setup"


def ended_line(section: CheckProfile) -> str:
    """`l1 passed in 3.2 s (500 examples)`: one finished check."""
    word = "passed" if section.passed else "FAILED"
    counted = f" ({section.done} {section.label})" if section.unit and section.done else ""
    return f"{section.name} {word} in {section.seconds:.1f} s{counted}"


def running_line(section: CheckProfile) -> str:
    """`l3: 120/500 episodes, 41 s, about 2 min left`: the check that is running."""
    elapsed = section.elapsed()
    parts = [f"{section.name}: running"]
    done, budget = section.done, section.budget
    if section.unit and budget:
        parts.append(f"{min(done, budget)}/{budget} {section.label}")
    elif section.unit and done:
        parts.append(f"{done} {section.label}")
    parts.append(f"{elapsed:.0f} s")
    if budget and 0 < done < budget:
        parts.append(f"about {_duration(elapsed * (budget - done) / done)} left")
    return ", ".join(parts)


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min"


def narrate(profile: Profile, say: Callable[[str], None], prefix: str) -> Profile:
    """Have `profile` tell `say` each check as it starts and ends (a translate run's
    display, which shows events, not a live count)."""

    def began(section: CheckProfile) -> None:
        if section.name != SETUP:
            say(f"{prefix}{section.name} running")

    def ended(section: CheckProfile) -> None:
        if section.name != SETUP:
            say(f"{prefix}{ended_line(section)}")

    profile.on_begin, profile.on_end = began, ended
    return profile


class VerifyProgress:
    """Hooks a run's profile: a live line on a terminal, a line per ended check otherwise.
    Use as a context manager around the run; `interrupted` after Ctrl-C."""

    def __init__(self, console: Console, profile: Profile | None = None) -> None:
        self.console = console
        self.profile = profile or Profile()
        self.finished: list[CheckProfile] = []
        self.live: Live | None = None
        self.started = time.perf_counter()
        if console.is_terminal:
            self.live = Live(
                console=console,
                refresh_per_second=2,
                transient=True,
                get_renderable=self._render,
            )
        self.profile.on_end = self._ended

    def __enter__(self) -> VerifyProgress:
        self.started = time.perf_counter()
        if self.live is not None:
            self.live.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self.live is not None:
            self.live.stop()

    def _ended(self, section: CheckProfile) -> None:
        if section.name == SETUP:
            return
        self.finished.append(section)
        self.console.print(ended_line(section), markup=False, highlight=False)

    def _render(self) -> Text:
        section = self.profile.current
        if section is None or section.name == SETUP:
            elapsed = time.perf_counter() - self.started
            return Text(f"starting: the port's worker and the reference, {elapsed:.0f} s")
        return Text(running_line(section))

    def interrupted(self) -> None:
        """After Ctrl-C: the checks that had finished, with their results, and the one cut
        short, so the minutes already spent still say something."""
        if self.live is not None:
            self.live.stop()
        running = self.profile.current
        cut = f" during {running.name}" if running is not None and running.name != SETUP else ""
        done = "; ".join(ended_line(s) for s in self.finished) or "no check had finished"
        self.console.print(f"interrupted{cut}; finished: {done}", markup=False, highlight=False)
