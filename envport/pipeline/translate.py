"""`envport translate` and `envport resume`: set a run up, drive it, say where things are.

Everything that can be wrong with the command (spec, target, model, prompts directory) is
found before the run directory is created, so a typo leaves no half-made run behind.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from envport import interrupts
from envport.errors import EXIT_DIVERGED, EXIT_OK, EnvportError, SpecError
from envport.gaps import gap_lines
from envport.io.scratch import scratch as scratch_dir
from envport.llm import RetryPolicy, load_model
from envport.llm.types import Model
from envport.pipeline import TRANSLATE_TARGETS
from envport.pipeline.driver import WALL_TIME, Driver
from envport.pipeline.model_choice import ModelChoice, choose_model, public_url
from envport.pipeline.progress import make_progress, model_messages_shown
from envport.pipeline.prompting import GAME_ADAPTERS, PromptBuilder, prompt_builder
from envport.pipeline.spec_argument import classify, infer_spec
from envport.runs.layout import RunDir, create_run, new_run_id, open_run
from envport.runs.options import Limits, ResumeOptions, TranslateOptions
from envport.runs.state import RunState
from envport.spec import SPEC_FILENAME, PortSpec, load_spec


def _prepare_environment() -> None:
    # Workers inherit this: generated ports should not fill port/ with __pycache__.
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")


def _load(spec: str, base_url: str | None, limits: Limits) -> Model:
    retry = RetryPolicy(attempts=limits.call_attempts)
    return load_model(spec, base_url=base_url, timeout=limits.call_timeout, retry=retry)


def _builder(spec: PortSpec, target: str, prompts_dir: str | None) -> PromptBuilder:
    return prompt_builder(spec, target, prompts_dir)


def translate(options: TranslateOptions, console: Console) -> int:
    target, out, run_id = options.target, options.out, options.run_id
    if target not in TRANSLATE_TARGETS:
        raise EnvportError(f"--target {target}: translate supports {', '.join(TRANSLATE_TARGETS)}")
    if run_id is not None and (out / run_id).exists():
        raise EnvportError(
            f"--run-id {run_id}: {out / run_id} exists; continue it with `envport resume "
            f"{out / run_id}` or choose another id"
        )
    given = classify(options.spec)
    if given.spec is not None:
        started = _start(options, given.spec, None)
    else:
        env = given.env or ""
        choose_model(options.model, None, target)  # a missing model, before the inference
        # Inferred into a scratch directory, so a failure leaves no run behind; the run
        # freezes a copy like any spec's and reads only that from then on (and on resume).
        with scratch_dir("envport-init-") as scratch:
            started = _start(options, infer_spec(env, Path(scratch), target), env)
    run, state, choice = started.run, started.state, started.choice
    spec, builder = started.spec, started.builder
    if given.env is not None:
        # The scratch directory is gone: the run's frozen copy is the spec now.
        spec = load_spec(run.spec_file)
        builder = _builder(spec, target, state.prompts_dir)

    def start() -> int:
        console.print(f"envport: run {state.run_id} in {run.root}", markup=False, highlight=False)
        if given.env is not None:
            # The run's copy is frozen (a resume restores it from the run's history): a
            # changed spec is a new run's.
            console.print(
                f"envport: inferred the spec from {given.env} -> {run.spec_file} (frozen for "
                f"this run); to change what was inferred: envport init {given.env} --out DIR, "
                f"edit DIR/{SPEC_FILENAME}, then envport translate DIR --target {target}",
                markup=False,
                highlight=False,
            )
        if choice.note:
            console.print(f"envport: {choice.note}", markup=False, highlight=False)
        return _drive(run, state, spec, started.model, builder, console)

    return _resumable(run, console, start)


@dataclass(frozen=True)
class _Started:
    run: RunDir
    state: RunState
    choice: ModelChoice
    model: Model
    spec: PortSpec
    builder: PromptBuilder


def _start(options: TranslateOptions, spec_file: Path, env: str | None) -> _Started:
    """Check everything the command names, then create the run directory."""
    target = options.target
    spec = load_spec(spec_file)
    if spec.game is not None and target not in GAME_ADAPTERS:
        raise SpecError(
            f"--target {target}: {spec.name} is a two-player game ([game]), ported to "
            f"{' or '.join(GAME_ADAPTERS)}"
        )
    if spec.parallel is not None and target not in ("numpy", "jax"):
        # Joint actions and per-agent outputs are verified against a NumPy VectorEnv and a
        # JAX port (examples/mpe_simple_spread); no Rust port of that form has been yet.
        raise SpecError(
            f"--target {target}: {spec.name} has agents moving at once ([parallel]), "
            "ported to numpy or jax so far"
        )
    prompts = str(Path(options.prompts).resolve()) if options.prompts else None
    builder = _builder(spec, target, prompts)
    # An inferred spec has no example directory beside it, so no replay session to default to.
    choice = choose_model(options.model, None if env else spec_file, target)
    live = _load(choice.spec, options.base_url, options.limits)
    target_spec = spec.target(target)
    state = RunState(
        run_id=options.run_id or new_run_id(spec.name, target),
        spec_source=env or str(spec_file.resolve()),
        spec_name=spec.name,
        target=target,  # type: ignore[arg-type]
        model=choice.spec,
        base_url=public_url(options.base_url),
        prompts_dir=prompts,
        limits=options.limits,
        optimize=options.optimize,
        strict=options.strict,
        phase="modules" if target_spec.modules else "plan",
        modules=list(target_spec.modules),
        entry=target_spec.entry,
    )
    run = create_run(options.out, spec_file, state)  # an interrupt while it works leaves nothing
    return _Started(run, state, choice, live, spec, builder)


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


def _style(state: RunState) -> str:
    if state.status != "verified":
        return "bold red"
    return "bold yellow" if state.gaps else "bold green"


def _print_paths(run: RunDir, state: RunState, console: Console) -> None:
    verdict = state.verdict if state.status == "verified" else f"gave up: {state.reason}"
    console.print(
        f"{verdict} ({state.spec_name} -> {state.target}, {state.step} steps, "
        f"{state.elapsed_s:.1f} s, {state.usage.described()}, ${state.cost_usd:.4f})",
        style=_style(state),
        markup=False,
        highlight=False,
    )
    for line in gap_lines(state.gaps):
        console.print(f"  gap {line}", style="yellow", markup=False, highlight=False)
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
