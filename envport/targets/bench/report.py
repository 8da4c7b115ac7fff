"""Bench results: one row per implementation and batch size, as JSON, a table and a plot."""

from __future__ import annotations

import contextlib
import importlib.metadata
import os
import platform
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field
from rich.console import Console
from rich.table import Table

from envport.errors import EnvportError
from envport.io.inert import InertConsole


class BenchRow(BaseModel):
    name: str = Field(description="implementation: `gymnasium`, `jax port`, `gymnax:CartPole-v1`")
    kind: Literal["reference", "port", "anchor"]
    backend: str
    batch: int
    sps: float = Field(description="steps per second (env transitions), best timed run")
    sps_runs: list[float] = Field(default_factory=list)
    steps: int = Field(description="steps per env in one timed run")
    compile_s: float = 0.0
    loop: str = "python"
    loops: dict[str, float] = Field(default_factory=dict, description="SPS of each loop tried")
    diverged: str | None = Field(
        default=None,
        description="the port's step at this size differs from the reference's (the first "
        "env and field): it was not timed, and `sps` is 0",
    )


class BenchReport(BaseModel):
    spec: str
    created: str
    machine: dict[str, Any] = Field(default_factory=dict)
    steps: int
    repeats: int
    batch_sizes: list[int]
    rows: list[BenchRow] = Field(default_factory=list)

    def find(self, name: str, batch: int) -> BenchRow | None:
        return next((r for r in self.rows if r.name == name and r.batch == batch), None)

    def timed(self) -> list[BenchRow]:
        """The rows with a speed: every row but a size the port diverged at."""
        return [row for row in self.rows if row.diverged is None]

    def diverged(self) -> list[BenchRow]:
        return [row for row in self.rows if row.diverged is not None]

    def names(self) -> list[str]:
        return list(dict.fromkeys(row.name for row in self.rows))

    def reference_sps(self) -> float | None:
        single = next((r for r in self.rows if r.kind == "reference" and r.batch == 1), None)
        return single.sps if single else None


def machine() -> dict[str, Any]:
    import numpy

    info: dict[str, Any] = {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": numpy.__version__,
    }
    for package in ("jax", "jaxlib", "gymnasium", "gymnax", "minigrid", "xminigrid", "pgx"):
        # Versions from metadata: importing JAX here would cost a second for a label.
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            info[package] = importlib.metadata.version(package)
    return info


def human(sps: float) -> str:
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if sps >= scale:
            return f"{sps / scale:.3g}{suffix}"
    return f"{sps:.3g}"


def ratio(value: float) -> str:
    """A speed ratio with enough digits to tell 0.5x from 1x: two decimals below 10,
    whole numbers above (where a decimal would be noise)."""
    if value >= 10:
        return f"{value:,.0f}x"
    if value >= 0.01:
        return f"{value:.2f}x"
    return f"{value:.1e}x"


def _anchor_batch(report: BenchReport) -> int | None:
    """The largest batch size at which both a port and an anchor were timed."""
    ports = {row.batch for row in report.timed() if row.kind == "port"}
    anchors = {row.batch for row in report.timed() if row.kind == "anchor"}
    return max(ports & anchors, default=None)


def console() -> Console:
    """A console wide enough for the table even when output goes to a file or a pipe."""
    out = InertConsole(highlight=False)
    return out if out.is_terminal else InertConsole(highlight=False, width=140)


def table(report: BenchReport) -> Table:
    """Implementations down, batch sizes across, SPS in the cells."""
    batches = sorted({row.batch for row in report.rows})
    out = Table(
        title=f"steps per second: {Path(report.spec).parent.name or report.spec}",
        caption=f"best of {report.repeats} runs of {report.steps} steps per env; "
        "JIT compile and Rust build apart",
    )
    out.add_column("implementation", no_wrap=True)
    for batch in batches:
        out.add_column(f"B={batch}", justify="right")
    out.add_column("compile s", justify="right")
    out.add_column("loop")
    reference = report.reference_sps()
    if reference:
        out.add_column("best / 1 env", justify="right")
    # The port against the fastest anchor at one batch size: the figure an optimisation
    # aims at (the goal is the fastest public implementation, whichever it is).
    versus = _anchor_batch(report)
    timed = [r for r in report.rows if r.kind == "anchor" and r.batch == versus]
    anchor = max(timed, key=lambda r: r.sps, default=None)
    if anchor:
        which = "anchor" if len(timed) == 1 else f"fastest anchor ({anchor.name})"
        out.add_column(f"/ {which} at B={versus}", justify="right")
    for name in report.names():
        rows = [row for row in report.timed() if row.name == name]
        cells = [speed_cell(report.find(name, b)) for b in batches]
        compile_s = max((row.compile_s for row in rows), default=0.0)
        loops = sorted({row.loop for row in rows})
        best = max((r.sps for r in rows), default=0.0)
        extra = [ratio(best / reference) if rows else "-"] if reference else []
        if anchor:
            mine = report.find(name, anchor.batch)
            extra.append(ratio(mine.sps / anchor.sps) if mine and not mine.diverged else "")
        out.add_row(name, *cells, f"{compile_s:.2f}" if compile_s else "-", ",".join(loops), *extra)
    return out


def speed_cell(row: BenchRow | None) -> str:
    """A row's speed, or that it diverged there (never a speed for a wrong port)."""
    if row is None:
        return ""
    return "diverged" if row.diverged else human(row.sps)


def plot(report: BenchReport, path: Path) -> None:
    """SPS against batch size, log-log; single-batch rows (the reference) as flat lines."""
    try:
        import matplotlib

        matplotlib.use("Agg")  # files only: never open a window
        import matplotlib.pyplot as plt
    except ImportError:
        raise EnvportError("--plot needs matplotlib: pip install 'envport[plot]'") from None
    figure, axes = plt.subplots(figsize=(7, 4.5))
    flat = 0
    for name in report.names():
        rows = sorted((r for r in report.timed() if r.name == name), key=lambda r: r.batch)
        if not rows:
            continue
        if len(rows) == 1:
            style = ("--", ":", "-.")[flat % 3]
            flat += 1
            label = f"{name} (B={rows[0].batch})"
            axes.axhline(rows[0].sps, linestyle=style, linewidth=1, label=label, color="grey")
            continue
        axes.plot([r.batch for r in rows], [r.sps for r in rows], marker="o", label=name)
    axes.set_xscale("log", base=2)
    axes.set_yscale("log")
    axes.set_xlabel("batch size (envs)")
    axes.set_ylabel("steps per second")
    axes.set_title(f"{Path(report.spec).parent.name}: steps per second")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize=8)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    plt.close(figure)
