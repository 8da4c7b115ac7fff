"""The HTML report of a run: one self-contained page from run.json, the journal and benches.

Everything the page shows from the transcript (prompts, model answers, diffs, divergence
texts, even file names) is untrusted text: the template escapes every value (jinja2
autoescape), and the page's Content-Security-Policy allows no scripts and no network at
all, so markup an answer smuggles in is shown as text and could not run if it slipped by.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from envport.errors import EnvportError
from envport.gaps import gap_lines
from envport.report import plots
from envport.report.views import LevelView, environment, level_view
from envport.review.terminal import prompt_label
from envport.review.timeline import (
    CALL_FAILED_EVENTS,
    OPTIMIZE_EVENTS,
    Iteration,
    Timeline,
    describe_optimize,
    level_summary,
    read_timeline,
)
from envport.runs.events import AnswerEvent, CheckEvent, CommitEvent, EditEvent, ParseErrorEvent
from envport.runs.layout import RunDir
from envport.runs.snapshot import pin_replays
from envport.runs.state import CheckOutcome, RunState

log = logging.getLogger("envport.report")

BENCH_GLOB = "bench*.json"


@dataclass
class CheckView:
    scope: str
    passed: bool
    seconds: float
    cached: bool
    outcomes: list[CheckOutcome]
    levels: list[LevelView]
    coverage: CoverageView | None = None


@dataclass
class CoverageView:
    """The reference's branch coverage of one check: the figure, what was never taken, and
    the source of the functions the run entered with each line marked."""

    summary: str
    missed: list[str]
    excluded: list[str]
    files: dict[str, list[tuple[int, str, str]]]


@dataclass
class IterationView:
    step: int
    label: str
    kind: str
    status: str  # pass, fail, none
    levels: dict[str, bool]
    decision: str
    why: str
    tokens: int
    cost_usd: float
    calls: int
    cached_calls: int
    prompts: list[dict[str, Any]]
    answers: list[AnswerEvent]
    notes: list[str]
    diffs: list[dict[str, Any]]
    checks: list[CheckView]
    commits: list[CommitEvent]


@dataclass
class BenchView:
    source: str
    batches: list[int]
    rows: list[tuple[str, list[str]]]
    plot: str | None


def diff_lines(diff: str) -> list[tuple[str, str]]:
    """(css class, line) for a unified diff."""
    out = []
    for line in diff.splitlines():
        if line.startswith(("+++", "---")):
            kind = "meta"
        elif line.startswith("@@"):
            kind = "hunk"
        elif line.startswith("+"):
            kind = "add"
        elif line.startswith("-"):
            kind = "del"
        else:
            kind = "ctx"
        out.append((kind, line))
    return out


def _diff_view(edit: EditEvent) -> dict[str, Any]:
    lines = diff_lines(edit.diff)
    return {
        "path": edit.path,
        "created": edit.created,
        "lines": lines,
        "added": sum(1 for kind, _ in lines if kind == "add"),
        "removed": sum(1 for kind, _ in lines if kind == "del"),
        # The answer repeated the file as it was: said, not shown as an open empty diff.
        "unchanged": not edit.diff.strip(),
    }


def _check_view(check: CheckEvent) -> CheckView:
    return CheckView(
        scope=check.scope,
        passed=check.passed,
        seconds=check.seconds,
        cached=check.cached,
        outcomes=check.outcomes,
        levels=[level_view(level) for level in check.levels],
        coverage=_coverage_view(check.coverage),
    )


def _coverage_view(data: dict[str, Any] | None) -> CoverageView | None:
    from envport.verifiers.reporting.branch_report import BranchCoverage

    if data is None:
        return None
    try:
        found = BranchCoverage.model_validate(data)
    except ValidationError:
        return None
    return CoverageView(
        summary=found.summary(),
        missed=[branch.text() for branch in found.missed],
        excluded=[f"{branch.text()}: {branch.out_of_scope}" for branch in found.excluded],
        files={
            name: [(line.number, line.text, line.mark) for line in lines]
            for name, lines in found.sources.items()
        },
    )


def _iteration_view(iteration: Iteration, timeline: Timeline) -> IterationView:
    passed = iteration.passed
    decisions = iteration.decisions
    notes = [f"answer unusable: {e.error}" for e in iteration.of(ParseErrorEvent)]
    notes += [
        f"{e.event.replace('_', ' ')}: {e.message}"
        for e in iteration.events
        if isinstance(e, CALL_FAILED_EVENTS)
    ]
    notes += [describe_optimize(e) for e in iteration.events if isinstance(e, OPTIMIZE_EVENTS)]
    if iteration.earlier_calls:
        notes.append(
            f"{len(iteration.earlier_calls)} model calls of an attempt cut short by an "
            "interruption are counted here; the resumed step was answered from the cache"
        )
    prompts = [
        {
            "label": prompt_label(prompt),
            "system": prompt.system,
            "prefix_sha": prompt.stable_prefix_sha256,
            "messages": prompt.messages,
        }
        for prompt in iteration.prompts
    ]
    return IterationView(
        step=iteration.step,
        label=iteration.label,
        kind=iteration.kind,
        status="none" if passed is None else ("pass" if passed else "fail"),
        levels=iteration.levels(),
        decision=timeline.decision_of(iteration),
        why=decisions[-1].why if decisions else "",
        tokens=iteration.usage.total,
        cost_usd=iteration.cost_usd,
        calls=len(iteration.calls),
        cached_calls=iteration.cached_calls,
        prompts=prompts,
        answers=iteration.answers,
        notes=notes,
        diffs=[_diff_view(edit) for edit in iteration.edits],
        checks=[_check_view(check) for check in iteration.checks],
        commits=iteration.commits,
    )


def _bench_views(run: RunDir, extra: list[Path]) -> list[BenchView]:
    from envport.targets.bench.report import BenchReport, speed_cell

    found = sorted(run.reports.glob(BENCH_GLOB))
    views = []
    for path in dict.fromkeys([*found, *extra]):
        try:
            report = BenchReport.model_validate_json(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            first = str(error).splitlines()[0]
            if path in extra:
                raise EnvportError(
                    f"--bench {path}: not an `envport bench --json` result ({first})"
                ) from None
            # Another tool's file that matches the name (the optimiser's comparisons).
            log.info("%s is not a bench result, left out: %s", path, first)
            continue
        batches = sorted({row.batch for row in report.rows})
        rows = []
        for name in report.names():
            cells = [speed_cell(report.find(name, b)) for b in batches]
            rows.append((name, cells))
        plot = None
        if plots.available():
            try:
                plot = plots.bench_plot(report)
            except Exception as error:  # the table still says it all
                log.warning("no bench plot: %s", error)
        views.append(BenchView(str(path), batches, rows, plot))
    return views


def _cost_plot(views: list[IterationView]) -> str | None:
    # Replayed or cached answers cost nothing: a chart of zeros says less than a sentence.
    if not plots.available() or not any(v.tokens or v.cost_usd for v in views):
        return None
    try:
        return plots.cost_plot(
            [f"{v.step} {v.label}" for v in views],
            [v.tokens for v in views],
            [v.cost_usd for v in views],
        )
    except Exception as error:
        log.warning("no cost plot: %s", error)
        return None


def render(run: RunDir, bench: list[Path] | None = None) -> str:
    state: RunState = run.load()
    timeline = read_timeline(run.transcript)
    for iteration in timeline.iterations:
        # Each iteration's replays run the port it checked, not the port as the run left it.
        pin_replays(iteration.checks, run, iteration.step, str(run.root))
    views = [_iteration_view(iteration, timeline) for iteration in timeline.iterations]
    used = {p["prefix_sha"] for view in views for p in view.prompts}
    contexts = {sha: text for sha, text in timeline.contexts.items() if sha in used}
    outcomes = list(state.results.values())
    results = [outcome.model_dump() for outcome in outcomes]
    template = environment().get_template("report.html.j2")
    return template.render(
        state=state,
        gap_lines=gap_lines,
        iterations=views,
        contexts=contexts,
        levels=level_summary(outcomes),
        results=results,
        total_tokens=timeline.usage.total,
        prompt_cache=timeline.usage.cache_note(),
        total_usd=timeline.cost_usd,
        cost_plot=_cost_plot(views),
        benches=_bench_views(run, bench or []),
        plots_missing=None if plots.available() else plots.MISSING,
        generated=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
    )
