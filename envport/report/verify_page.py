"""The HTML page of one `envport verify`: `verify --html FILE`, or `envport report VERIFY.json`
from what `verify --json` wrote. The same page a run has for a check, for a verify alone: the
verdict, each check's line, each divergence with its plot and grid pictures, and its replay
line.

A report holds the port's own words (its errors, what it printed): the template escapes every
value and shows control characters escaped (`envport.report.views.environment`), and the page
runs no script and loads nothing.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from pydantic import ValidationError

from envport.errors import EnvportError
from envport.gaps import GapKind, gap_lines, verdict_word
from envport.io import write_atomically
from envport.report.views import environment, level_view
from envport.verifiers.reporting.divergence import VerifyReport


def read_verify_report(path: Path) -> VerifyReport:
    """What `verify --json` wrote, or one line saying why this file is not that."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise EnvportError(
            f"{path}: cannot be read ({error}); pass a `verify --json` file"
        ) from None
    try:
        return VerifyReport.model_validate_json(text)
    except ValidationError as error:
        first = str(error).splitlines()[0]
        raise EnvportError(
            f"{path}: not what `envport verify --json` writes ({first}); pass that file, "
            "or a run directory"
        ) from None


def render_verify(report: VerifyReport) -> str:
    levels = [level_view(result.model_dump(mode="json")) for result in report.results]
    shown_gaps = [gap for gap in report.gaps if gap.kind is not GapKind.NOT_RUN]
    return (
        environment()
        .get_template("verify.html.j2")
        .render(
            report=report,
            word=verdict_word(report.diverged, report.gaps, report.strict),
            verdict=report.verdict(),
            levels=levels,
            grids=any(d.grids for level in levels for d in level.divergences),
            gaps=gap_lines(shown_gaps),
            coverage=report.coverage.summary() if report.coverage is not None else None,
            generated=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        )
    )


def write_verify_page(report: VerifyReport, out: Path) -> Path:
    """The page at `out` (its folder made), readable by others like a run's report."""
    out.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(out, render_verify(report))
    out.chmod(0o644)
    return out
