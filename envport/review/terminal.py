"""`envport review` output: the list of iterations, and one iteration in full.

Everything printed from the transcript is model output or derived from it, so it goes out
as plain text (no rich markup) with terminal control characters made visible: an answer
must not be able to move the cursor, recolour the terminal or retitle the window.
"""

from __future__ import annotations

import os
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.rule import Rule
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from envport.io.inert import inert
from envport.review.timeline import (
    CALL_FAILED_EVENTS,
    OPTIMIZE_EVENTS,
    Iteration,
    Timeline,
    describe_optimize,
)
from envport.runs.events import (
    AnswerEvent,
    CheckEvent,
    EditEvent,
    ModelCallEvent,
    ParseErrorEvent,
    PromptEvent,
    ProposedTestEvent,
)
from envport.runs.state import RunState

# How much of the long, unchanging parts of a prompt to show without --full.
PREVIEW_LINES = 6


def plain(text: Any, style: str = "") -> Text:
    return Text(inert(text), style=style)


def money(usd: float) -> str:
    return f"${usd:.4f}"


def level_cells(levels: dict[str, bool]) -> Text:
    out = Text()
    for index, (level, passed) in enumerate(levels.items()):
        if index:
            out.append(" ")
        out.append(f"{level} {'ok' if passed else 'FAIL'}", style="green" if passed else "bold red")
    return out


def header(state: RunState) -> Text:
    text = Text()
    text.append(f"run {state.run_id}", style="bold")
    text.append(inert(f": {state.spec_name} -> {state.target}, model {state.model}\n"))
    verdict_style = "bold red" if state.status != "verified" else "bold green"
    if state.gaps:
        verdict_style = "bold yellow"
    text.append(state.verdict, style=verdict_style)
    if state.reason:
        text.append(inert(f" ({state.reason})"))
    text.append(
        f"\n{state.step} steps, {state.calls_text()}, {state.usage.described()}, "
        f"{money(state.cost_usd)}, "
        f"{state.elapsed_s:.1f} s"
    )
    return text


def iteration_table(timeline: Timeline) -> Table:
    table = Table(box=None, header_style="bold", pad_edge=False, padding=(0, 2, 0, 0))
    for name, justify in (
        ("#", "right"),
        ("phase", "left"),
        ("module", "left"),
        ("iter", "right"),
        ("levels", "left"),
        ("decision", "left"),
        ("tokens", "right"),
        ("cost", "right"),
        ("cached", "right"),
    ):
        table.add_column(name, justify=justify, no_wrap=True)  # type: ignore[arg-type]
    for iteration in timeline.iterations:
        number = iteration.number
        table.add_row(
            str(iteration.step),
            plain(iteration.kind),
            plain(iteration.scope),
            "-" if number is None else str(number),
            level_cells(iteration.levels()),
            plain(timeline.decision_of(iteration)),
            f"{iteration.usage.total:,}",
            money(iteration.cost_usd),
            str(iteration.cached_calls),
        )
    return table


def overview(state: RunState, timeline: Timeline, run_arg: str) -> RenderableType:
    hint = Text(
        f"\n{len(timeline.iterations)} iterations; one in full: "
        f"envport review {run_arg} --iteration K",
        style="dim",
    )
    total = Text(f"total: {timeline.usage.described()}, {money(timeline.cost_usd)}", style="bold")
    return Group(header(state), Text(""), iteration_table(timeline), Text(""), total, hint)


def _preview(text: str, full: bool) -> str:
    lines = text.splitlines()
    if full or len(lines) <= PREVIEW_LINES:
        return text
    shown = "\n".join(lines[:PREVIEW_LINES])
    return f"{shown}\n[... {len(lines) - PREVIEW_LINES} more lines; --full shows them]"


def _section(title: str) -> Rule:
    return Rule(Text(inert(title), style="bold"), align="left", style="dim")


def prompt_label(prompt: PromptEvent) -> str:
    return f"{prompt.purpose.phase} {prompt.purpose.module or ''}".strip()


def _prompt(prompt: PromptEvent, timeline: Timeline, full: bool) -> list[RenderableType]:
    parts: list[RenderableType] = [_section(f"prompt ({prompt_label(prompt)})")]
    if prompt.system:
        parts += [plain("system:", "bold"), plain(_preview(prompt.system, full), "dim")]
    sha = prompt.stable_prefix_sha256
    prefix = timeline.contexts.get(sha, "")
    if prefix:
        parts += [
            plain(f"stable prefix (sha256 {sha[:12]}):", "bold"),
            plain(_preview(prefix, full), "dim"),
        ]
    for message in prompt.messages:
        parts += [plain(f"{message.role}:", "bold"), plain(message.text)]
    return parts


def _answer(answer: AnswerEvent, call: ModelCallEvent | None) -> list[RenderableType]:
    bits = [answer.model]
    if call is not None:
        bits.append(f"{call.usage.described()}, {money(call.cost_usd)}")
    if answer.cached:
        bits.append("from the cache")
    bits.append(f"stop {answer.stop_reason}")
    title = f"answer ({answer.purpose.phase}): " + ", ".join(b for b in bits if b)
    return [_section(title), plain(answer.text)]


def _diff(edit: EditEvent, color: bool) -> list[RenderableType]:
    if not edit.diff.strip():
        # The answer repeated the file as it was: nothing to show but that.
        return [_section(f"diff {edit.path} (no change)")]
    what = "created" if edit.created else "changed"
    diff = inert(edit.diff)
    body: RenderableType = (
        Syntax(diff, "diff", theme="ansi_dark", word_wrap=True) if color else Text(diff)
    )
    return [_section(f"diff {edit.path} ({what})"), body]


def _check(check: CheckEvent) -> list[RenderableType]:
    verdict = "pass" if check.passed else "FAIL"
    extra = " (cached result)" if check.cached else ""
    parts: list[RenderableType] = [
        _section(f"check {check.scope}: {verdict}, {check.seconds} s{extra}")
    ]
    for outcome in check.outcomes:
        passed = outcome.passed
        parts.append(
            Text.assemble(
                ("pass " if passed else "FAIL ", "green" if passed else "bold red"),
                inert(outcome.name),
            )
        )
        for failure in outcome.failures:
            parts.append(plain("    " + failure.replace("\n", "\n    ")))
    return parts


def detail(iteration: Iteration, timeline: Timeline, *, full: bool, color: bool) -> Group:
    parts: list[RenderableType] = [
        Text(
            f"iteration {iteration.step}: {inert(iteration.label)} - {len(iteration.calls)} "
            f"model calls, {iteration.usage.described()}, {money(iteration.cost_usd)}",
            style="bold",
        )
    ]
    if iteration.earlier_calls:
        parts.append(
            plain(
                f"(includes {len(iteration.earlier_calls)} calls of an attempt cut short "
                "by an interruption; the resumed step was answered from the cache)",
                "dim",
            )
        )
    calls = iteration.of(ModelCallEvent)
    for index, prompt in enumerate(iteration.prompts):
        parts += _prompt(prompt, timeline, full)
        answers = iteration.answers
        if index < len(answers):
            call = calls[index] if index < len(calls) else None
            parts += _answer(answers[index], call)
    for error in iteration.of(ParseErrorEvent):
        parts += [_section("answer unusable"), plain(error.error)]
    for event in iteration.events:
        if isinstance(event, CALL_FAILED_EVENTS):
            parts += [_section(event.event.replace("_", " ")), plain(event.message)]
    for event in iteration.events:
        if isinstance(event, OPTIMIZE_EVENTS):
            parts += [_section("optimisation"), plain(describe_optimize(event))]
    for edit in iteration.edits:
        parts += _diff(edit, color)
    for test in iteration.of(ProposedTestEvent):
        parts.append(plain(f"proposed test saved: proposed_tests/{test.path}", "dim"))
    for check in iteration.checks:
        parts += _check(check)
    for decision in iteration.decisions:
        why = decision.why or decision.signature
        parts += [_section(f"decision: {decision.decision}"), plain(why)]
    for commit in iteration.commits:
        parts.append(plain(f"commit {commit.sha[:10]} {commit.message}"))
    return Group(*parts)


def show(console: Console, renderable: RenderableType) -> None:
    """Paged on a terminal (colours kept), printed straight through otherwise."""
    if console.is_terminal:
        # less shows colours only when told to (else the escape codes appear as text); a
        # user's own LESS setting wins.
        os.environ.setdefault("LESS", "-R")
        with console.pager(styles=True):
            console.print(renderable)
    else:
        console.print(renderable)
