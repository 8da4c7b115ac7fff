"""What a person watching a batch sees: a live table on a terminal, plain lines otherwise,
and a summary table at the end either way."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from rich.console import Console
from rich.live import Live
from rich.table import Table
from rich.text import Text

from envport.io.inert import inert
from envport.review.terminal import level_cells

STYLES = {
    "verified": "green",
    "running": "bold cyan",
    "gave up": "red",
    "error": "red",
    "stopped": "red",
    "killed": "yellow",
    "interrupted": "yellow",
    "not started": "yellow",
    "waiting": "dim",
    "queued": "dim",
}


@dataclass
class RunRow:
    id: str
    status: str = "queued"
    detail: str = ""
    steps: int = 0
    iterations: int | None = None
    levels: dict[str, bool] = field(default_factory=dict)
    tokens: int = 0
    usd: float = 0.0
    elapsed_s: float = 0.0
    budget_usd: float | None = None
    run_dir: str = ""

    @property
    def verified(self) -> bool:
        return self.status == "verified"


def _money(row: RunRow) -> str:
    cap = f" / {row.budget_usd:.2f}" if row.budget_usd is not None else ""
    return f"${row.usd:.4f}{cap}"


def live_table(rows: list[RunRow], title: str) -> Table:
    table = Table(title=title, title_justify="left", header_style="bold", expand=False)
    for name in ("run", "status", "where / why", "steps", "tokens", "dollars", "time"):
        table.add_column(name, justify="right" if name in ("steps", "tokens", "time") else "left")
    for row in rows:
        table.add_row(
            inert(row.id),
            Text(row.status, style=STYLES.get(row.status, "")),
            Text(inert(row.detail), overflow="fold"),
            str(row.steps),
            f"{row.tokens:,}",
            _money(row),
            f"{row.elapsed_s:.0f} s",
        )
    return table


def summary_table(rows: list[RunRow], title: str) -> Table:
    table = Table(title=title, title_justify="left", header_style="bold")
    for name in ("run", "status", "iterations", "levels", "tokens", "dollars", "wall time"):
        justify = "right" if name in ("iterations", "tokens", "dollars", "wall time") else "left"
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for row in rows:
        status = Text(row.status, style=STYLES.get(row.status, ""))
        if row.detail and not row.verified:
            status.append(f"\n{inert(row.detail)}", style="dim")
        table.add_row(
            inert(row.id),
            status,
            "-" if row.iterations is None else str(row.iterations),
            level_cells(row.levels),
            f"{row.tokens:,}",
            f"${row.usd:.4f}",
            f"{row.elapsed_s:.1f} s",
        )
    table.add_section()
    table.add_row(
        "total",
        f"{sum(r.verified for r in rows)}/{len(rows)} verified",
        str(sum(r.iterations or 0 for r in rows)),
        "",
        f"{sum(r.tokens for r in rows):,}",
        f"${sum(r.usd for r in rows):.4f}",
        f"{sum(r.elapsed_s for r in rows):.1f} s",
    )
    return table


class LiveDisplay:
    """The table redrawn in place (a terminal)."""

    def __init__(self, console: Console, title: str) -> None:
        self.title = title
        self.rows: list[RunRow] = []
        self.live = Live(console=console, refresh_per_second=2, get_renderable=self._render)

    def _render(self) -> Table:
        return live_table(self.rows, self.title)

    def start(self, rows: list[RunRow]) -> None:
        self.rows = rows
        self.live.start()

    def update(self, rows: list[RunRow]) -> None:
        self.rows = rows
        self.live.refresh()

    def stop(self) -> None:
        self.live.stop()


class PlainDisplay:
    """One line whenever a run's status or place changes (a pipe, a CI log)."""

    def __init__(self, console: Console, title: str) -> None:
        self.console = console
        self.title = title
        self.started = time.monotonic()
        self.seen: dict[str, tuple[str, str]] = {}

    def start(self, rows: list[RunRow]) -> None:
        self.console.print(self.title, markup=False, highlight=False)
        self.update(rows)

    def update(self, rows: list[RunRow]) -> None:
        for row in rows:
            key = (row.status, row.detail)
            if self.seen.get(row.id) == key:
                continue
            self.seen[row.id] = key
            elapsed = time.monotonic() - self.started
            where = f": {row.detail}" if row.detail else ""
            self.console.print(
                inert(
                    f"[{elapsed:7.1f}s] {row.id} {row.status}{where} "
                    f"({row.steps} steps, {row.tokens:,} tokens, {_money(row)})"
                ),
                markup=False,
                highlight=False,
            )

    def stop(self) -> None:
        pass


Display = LiveDisplay | PlainDisplay


def make_display(console: Console, title: str) -> Display:
    return LiveDisplay(console, title) if console.is_terminal else PlainDisplay(console, title)
