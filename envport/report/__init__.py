"""The HTML report of a run: `envport report RUN`, also written when a run ends."""

from __future__ import annotations

import logging
from pathlib import Path

from rich.console import Console

from envport.io import write_atomically
from envport.runs.layout import RunDir, open_run

REPORT_NAME = "report.html"

log = logging.getLogger("envport.report")


def report_path(run: RunDir) -> Path:
    return run.reports / REPORT_NAME


def write_report(
    run_arg: Path | str, out: Path | None = None, bench: list[Path] | None = None
) -> Path:
    """Render the run's report into RUN/reports/report.html (or `out`); returns the path."""
    from envport.report.page import render

    run = open_run(run_arg)
    target = out or report_path(run)
    write_atomically(target, render(run, bench))
    # Meant to be shared (attached to an issue, served as a file): readable, unlike the
    # private temporary file it was written through.
    target.chmod(0o644)
    return target


def write_report_quietly(run_root: Path, console: Console | None = None) -> Path | None:
    """The end-of-run hook: a report that cannot be written is one warning line, never a
    failed run (the run's outcome is already saved when this is called)."""
    try:
        return write_report(run_root)
    except Exception as error:
        first = str(error).splitlines()[0] if str(error) else type(error).__name__
        message = f"envport: the HTML report was not written: {first}"
        if console is not None:
            console.print(message, markup=False, highlight=False)
        else:
            log.warning(message)
        return None
