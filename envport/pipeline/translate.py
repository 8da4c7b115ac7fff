"""`envport translate` and `envport resume`: set a run up, drive it, say where things are.

Everything that can be wrong with the command (spec, target, model, prompts directory) is
found before the run directory is created, so a typo leaves no half-made run behind.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from envport.errors import EXIT_DIVERGED, EXIT_INTERRUPTED, EXIT_OK, EnvportError
from envport.llm import load_model
from envport.llm.types import Model
from envport.pipeline import TRANSLATE_TARGETS
from envport.pipeline.driver import Driver
from envport.pipeline.model_choice import choose_model, public_url
from envport.pipeline.progress import make_progress, model_messages_shown
from envport.pipeline.prompting import PromptBuilder, target_info
from envport.pipeline.sources import read_rules, read_sources
from envport.prompts.render import Prompts
from envport.runs.layout import RunDir, create_run, new_run_id, open_run
from envport.runs.state import Limits, OptimizeSettings, RunState
from envport.spec import PortSpec, load_spec, spec_path


@dataclass
class LimitOverrides:
    """Budgets from the command line; None keeps the default (or the run's own, on resume)."""

    max_iterations: int | None = None
    max_usd: float | None = None
    max_tokens: int | None = None
    max_minutes: float | None = None
    stuck_after: int | None = None

    def given(self) -> bool:
        return any(value is not None for value in vars(self).values())

    def apply(self, limits: Limits) -> Limits:
        changes = {key: value for key, value in vars(self).items() if value is not None}
        return limits.model_copy(update=changes)


def _prepare_environment() -> None:
    # Workers inherit this: generated ports should not fill port/ with __pycache__.
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")


def _builder(spec: PortSpec, target: str, prompts_dir: str | None) -> PromptBuilder:
    sources, rules = read_sources(spec), read_rules(spec)
    return PromptBuilder(Prompts(prompts_dir), spec, sources, target_info(target), rules)


def translate(
    spec_arg: str,
    target: str,
    *,
    model: str | None,
    base_url: str | None,
    out: Path,
    prompts_dir: str | None,
    limits: LimitOverrides,
    console: Console,
    optimize: OptimizeSettings | None = None,
) -> int:
    if target not in TRANSLATE_TARGETS:
        raise EnvportError(f"--target {target}: translate supports {', '.join(TRANSLATE_TARGETS)}")
    spec_file = spec_path(spec_arg)
    spec = load_spec(spec_file)
    prompts = str(Path(prompts_dir).resolve()) if prompts_dir else None
    builder = _builder(spec, target, prompts)
    choice = choose_model(model, spec_file, target)
    live = load_model(choice.spec, base_url=base_url)
    target_spec = spec.target(target)
    state = RunState(
        run_id=new_run_id(spec.name, target),
        spec_source=str(spec_file.resolve()),
        spec_name=spec.name,
        target=target,  # type: ignore[arg-type]
        model=choice.spec,
        base_url=public_url(base_url),
        prompts_dir=prompts,
        limits=limits.apply(Limits()),
        optimize=optimize or OptimizeSettings(),
        phase="modules" if target_spec.modules else "plan",
        modules=list(target_spec.modules),
        entry=target_spec.entry,
    )
    run = create_run(out, spec_file, state)
    console.print(f"envport: run {state.run_id} in {run.root}", markup=False, highlight=False)
    if choice.note:
        console.print(f"envport: {choice.note}", markup=False, highlight=False)
    return _drive(run, state, spec, live, builder, console)


def resume(
    run_arg: str,
    *,
    base_url: str | None,
    limits: LimitOverrides,
    console: Console,
) -> int:
    run = open_run(run_arg)
    state = run.load()
    if state.status == "verified":
        _print_paths(run, state, console)
        return EXIT_OK
    if state.status == "gave_up":
        if not limits.given():
            console.print(
                f"envport: run {state.run_id} gave up: {state.reason}; raise a budget "
                "(--max-iterations, --budget-usd, --budget-tokens, --max-minutes) to continue, "
                f"or edit {run.port} by hand and check it: envport verify {run.root} "
                f"--port {run.port}",
                markup=False,
                highlight=False,
            )
            return EXIT_DIVERGED
        state.stuck.count = 0  # a deliberate retry gets a fresh look at a stuck divergence
    state.limits = limits.apply(state.limits)
    if base_url:
        state.base_url = public_url(base_url)
    spec = load_spec(run.spec_file)
    builder = _builder(spec, state.target, state.prompts_dir)
    live = load_model(state.model, base_url=base_url or state.base_url)
    console.print(
        f"envport: resuming {state.run_id} at step {state.step} ({state.phase} {state.scope})",
        markup=False,
        highlight=False,
    )
    return _drive(run, state, spec, live, builder, console)


def _drive(
    run: RunDir,
    state: RunState,
    spec: PortSpec,
    model: Model,
    builder: PromptBuilder,
    console: Console,
) -> int:
    _prepare_environment()
    progress = make_progress(console)
    driver = Driver(run, state, spec, model, builder, progress)
    try:
        with model_messages_shown(progress, lambda: driver.state):
            final = driver.run_until_done()
    except KeyboardInterrupt:
        console.print(
            f"envport: interrupted at step {driver.state.step}; continue with: "
            f"envport resume {run.root}",
            markup=False,
            highlight=False,
        )
        return EXIT_INTERRUPTED
    except EnvportError as error:
        # A model that cannot be reached, a replay session without the answer: the run is
        # intact and can be resumed once the cause is fixed.
        raise EnvportError(
            f"{error}; the run is saved, continue with: envport resume {run.root}",
            exit_code=error.exit_code,
        ) from None
    from envport.report import write_report_quietly

    # The run's outcome is saved already: a report that cannot be written is only a warning.
    write_report_quietly(run.root, console)
    _print_paths(run, final, console)
    return EXIT_OK if final.status == "verified" else EXIT_DIVERGED


def _print_paths(run: RunDir, state: RunState, console: Console) -> None:
    verdict = "verified" if state.status == "verified" else f"gave up: {state.reason}"
    console.print(
        f"{verdict} ({state.spec_name} -> {state.target}, {state.step} steps, "
        f"{state.elapsed_s:.1f} s, {state.usage.total:,} tokens, ${state.cost_usd:.4f})",
        style="bold green" if state.status == "verified" else "bold red",
        markup=False,
        highlight=False,
    )
    html = run.reports / "report.html"
    checks = run.reports / "verify.json"
    rows: list[tuple[str, object]] = [("port", run.port)]
    if html.is_file():
        # What a user calls the report: the page with the timeline, diffs and plots.
        rows.append(("report", html))
    rows += [
        ("checks", checks if checks.is_file() else run.reports),
        ("summary", run.reports / "outcome.md"),
        ("transcript", run.transcript),
        ("review", f"envport review {run.root}"),
        ("history", f"git -C {run.root} log --stat"),
    ]
    if state.status != "verified":
        rows += [
            ("resume", f"envport resume {run.root} --max-iterations N"),
            ("by hand", f"edit {run.port}, then: envport verify {run.root} --port {run.port}"),
        ]
    for label, where in rows:
        console.print(f"  {label + ':':<12}{where}", markup=False, highlight=False)
