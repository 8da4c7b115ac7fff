"""`envport translate` and `envport resume`: set a run up, drive it, say where things are.

Everything that can be wrong with the command (spec, target, model, prompts directory) is
found before the run directory is created, so a typo leaves no half-made run behind.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from rich.console import Console

from envport import interrupts
from envport.errors import EXIT_DIVERGED, EXIT_OK, EnvportError
from envport.llm import RetryPolicy, load_model
from envport.llm.types import Model
from envport.pipeline import TRANSLATE_TARGETS
from envport.pipeline.driver import WALL_TIME, Driver
from envport.pipeline.model_choice import choose_model, public_url
from envport.pipeline.progress import make_progress, model_messages_shown
from envport.pipeline.prompting import PromptBuilder, target_info
from envport.pipeline.sources import read_rules, read_sources
from envport.prompts.render import Prompts
from envport.runs.layout import RunDir, create_run, new_run_id, open_run
from envport.runs.options import Limits, ResumeOptions, TranslateOptions
from envport.runs.state import RunState
from envport.spec import PortSpec, load_spec, spec_path


def _prepare_environment() -> None:
    # Workers inherit this: generated ports should not fill port/ with __pycache__.
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")


def _load(spec: str, base_url: str | None, limits: Limits) -> Model:
    retry = RetryPolicy(attempts=limits.call_attempts)
    return load_model(spec, base_url=base_url, timeout=limits.call_timeout, retry=retry)


def _builder(spec: PortSpec, target: str, prompts_dir: str | None) -> PromptBuilder:
    sources, rules = read_sources(spec), read_rules(spec)
    return PromptBuilder(Prompts(prompts_dir), spec, sources, target_info(target), rules)


def translate(options: TranslateOptions, console: Console) -> int:
    target, out, run_id = options.target, options.out, options.run_id
    if target not in TRANSLATE_TARGETS:
        raise EnvportError(f"--target {target}: translate supports {', '.join(TRANSLATE_TARGETS)}")
    if run_id is not None and (out / run_id).exists():
        raise EnvportError(
            f"--run-id {run_id}: {out / run_id} exists; continue it with `envport resume "
            f"{out / run_id}` or choose another id"
        )
    spec_file = spec_path(options.spec)
    spec = load_spec(spec_file)
    prompts = str(Path(options.prompts).resolve()) if options.prompts else None
    builder = _builder(spec, target, prompts)
    choice = choose_model(options.model, spec_file, target)
    run_limits = options.limits
    live = _load(choice.spec, options.base_url, run_limits)
    target_spec = spec.target(target)
    state = RunState(
        run_id=run_id or new_run_id(spec.name, target),
        spec_source=str(spec_file.resolve()),
        spec_name=spec.name,
        target=target,  # type: ignore[arg-type]
        model=choice.spec,
        base_url=public_url(options.base_url),
        prompts_dir=prompts,
        limits=run_limits,
        optimize=options.optimize,
        phase="modules" if target_spec.modules else "plan",
        modules=list(target_spec.modules),
        entry=target_spec.entry,
    )
    run = create_run(out, spec_file, state)  # an interrupt while it works leaves nothing

    def start() -> int:
        console.print(f"envport: run {state.run_id} in {run.root}", markup=False, highlight=False)
        if choice.note:
            console.print(f"envport: {choice.note}", markup=False, highlight=False)
        return _drive(run, state, spec, live, builder, console)

    return _resumable(run, console, start)


def resume(options: ResumeOptions, console: Console) -> int:
    run = open_run(options.run)
    return _resumable(run, console, lambda: _resume(run, options, console))


def _resume(run: RunDir, options: ResumeOptions, console: Console) -> int:
    base_url, limits = options.base_url, options.limits
    state = run.load()
    if state.status == "verified":
        if not (run.reports / "report.html").is_file():
            # Verified, then stopped while its report was being written.
            from envport.report import write_report_quietly

            write_report_quietly(run.root, console)
        _print_paths(run, state, console)
        return EXIT_OK
    if state.status == "gave_up":
        if not limits.gives_budget():
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
    state.limits = limits.over(state.limits)
    if base_url:
        state.base_url = public_url(base_url)
    spec = load_spec(run.spec_file)
    builder = _builder(spec, state.target, state.prompts_dir)
    live = _load(state.model, base_url or state.base_url, state.limits)
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


def _resumable(run: RunDir, console: Console, body: Callable[[], int]) -> int:
    """Run `body` on an existing run: an interrupt at any moment, or anything that broke
    after one, ends with the line that continues the run and exit 130 (143 for SIGTERM)."""
    try:
        code = body()
        interrupts.check()  # one that something swallowed on the way still counts
        interrupts.decided()
        return code
    except BaseException as error:
        signum = interrupts.received()
        if signum is None and not isinstance(error, KeyboardInterrupt):
            raise
        signum = signum or getattr(error, "signum", None)
    interrupts.decided()
    try:
        where = f" at step {run.load().step}"
    except EnvportError:
        where = ""
    console.print(
        f"envport: {interrupts.describe(signum)}{where}; continue with: envport resume {run.root}",
        markup=False,
        highlight=False,
    )
    return interrupts.exit_code(signum)


def _print_paths(run: RunDir, state: RunState, console: Console) -> None:
    verdict = "verified" if state.status == "verified" else f"gave up: {state.reason}"
    console.print(
        f"{verdict} ({state.spec_name} -> {state.target}, {state.step} steps, "
        f"{state.elapsed_s:.1f} s, {state.usage.described()}, ${state.cost_usd:.4f})",
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
        # The budget that ended the run is the one to raise.
        raise_flag = "--max-minutes M" if WALL_TIME in state.reason else "--max-iterations N"
        rows += [
            ("resume", f"envport resume {run.root} {raise_flag}"),
            ("by hand", f"edit {run.port}, then: envport verify {run.root} --port {run.port}"),
        ]
    for label, where in rows:
        console.print(f"  {label + ':':<12}{where}", markup=False, highlight=False)
