"""What a person watching a run sees: a live panel on a terminal, plain lines otherwise.

The driver reports through `Progress.event(state, text)`; this module decides how to show
it. A live display in a pipe or a CI log is noise, so it is only used on a TTY.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Protocol

from rich.console import Console, Group
from rich.live import Live
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from envport.io.inert import inert
from envport.runs.state import RunState


class Progress(Protocol):
    def start(self, state: RunState) -> None: ...
    def event(self, state: RunState, text: str) -> None: ...
    def stop(self) -> None: ...


def _money(state: RunState) -> str:
    return f"{state.usage.total:,} tokens, ${state.cost_usd:.4f}"


def _what(state: RunState) -> str:
    if state.phase == "modules":
        return f"module {state.scope} #{state.iteration}"
    if state.phase == "composed":
        return f"whole port #{state.iteration}"
    if state.phase == "optimize":
        return f"optimise round {state.optimization.rounds_done + 1}"
    return state.phase


class PlainProgress:
    """One line per event, prefixed by the elapsed time: readable in logs and pipes."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.started = time.monotonic()
        self.base = 0.0

    def start(self, state: RunState) -> None:
        self.base = state.elapsed_s
        self.started = time.monotonic()

    def event(self, state: RunState, text: str) -> None:
        elapsed = self.base + time.monotonic() - self.started
        # The event quotes the port and the model (an error, a retry's reply): shown inert.
        self.console.print(
            inert(f"[{elapsed:6.1f}s] {_what(state)}: {text} ({_money(state)})"),
            markup=False,
            highlight=False,
        )

    def stop(self) -> None:
        pass


class LiveProgress:
    """A panel redrawn in place: phase, module, iteration, check results, cost, elapsed."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.state: RunState | None = None
        self.last = ""
        self.started = time.monotonic()
        self.base = 0.0
        self.live = Live(console=console, refresh_per_second=4, get_renderable=self._render)

    def start(self, state: RunState) -> None:
        self.state = state
        self.base = state.elapsed_s
        self.started = time.monotonic()
        self.live.start()

    def event(self, state: RunState, text: str) -> None:
        self.state = state
        self.last = text
        self.live.refresh()

    def stop(self) -> None:
        self.live.stop()

    def _render(self) -> Panel:
        """The panel; every string in it passes through `inert`: rich's `Text` prints what it
        holds as it is (the console's own inert printing never sees it), and the last event
        quotes the port and the model."""
        state = self.state
        if state is None:
            return Panel("starting")
        summary = Table.grid(padding=(0, 2))
        summary.add_column(style="bold")
        summary.add_column()
        elapsed = self.base + time.monotonic() - self.started
        summary.add_row("run", inert(state.run_id))
        summary.add_row("phase", inert(state.phase))
        summary.add_row("module", inert(state.scope))
        summary.add_row("iteration", str(state.iteration))
        summary.add_row("spent", _money(state))
        summary.add_row("elapsed", f"{elapsed:.1f} s")
        checks = Table(show_header=True, header_style="bold", box=None, padding=(0, 2))
        checks.add_column("check")
        checks.add_column("result")
        for outcome in state.results.values():
            checks.add_row(
                inert(outcome.name),
                Text("pass", style="green") if outcome.passed else Text("FAIL", style="red"),
            )
        body = Group(summary, Text(""), checks, Text(""), Text(inert(self.last), style="dim"))
        title = inert(f"envport translate {state.spec_name} -> {state.target}")
        return Panel(body, title=title)


def make_progress(console: Console) -> Progress:
    return LiveProgress(console) if console.is_terminal else PlainProgress(console)


class _ToProgress(logging.Handler):
    def __init__(self, progress: Progress, state_of: Callable[[], RunState]) -> None:
        super().__init__(level=logging.INFO)
        self.progress = progress
        self.state_of = state_of

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.progress.event(self.state_of(), f"model: {record.getMessage()}")
        except Exception:
            self.handleError(record)


@contextmanager
def model_messages_shown(progress: Progress, state_of: Callable[[], RunState]) -> Iterator[None]:
    """What the model layer logs goes to the progress display while a run is driven: above
    all each retry of a call (the status, attempt k of n, the wait), so a run waiting out a
    504 or a rate limit says so instead of printing nothing for minutes."""
    logger = logging.getLogger("envport.llm")
    handler = _ToProgress(progress, state_of)
    level = logger.level
    logger.addHandler(handler)
    if logger.getEffectiveLevel() > logging.INFO:
        logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
