"""`envport verify`: run the levels on a port someone hands us and say whether it matches.

`verify` builds one context (`envport.verifiers.context`), starts the processes, and runs
the applicable checks of `envport.verifiers.checks.CHECKS` in order into the report.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import Any, cast

from envport.errors import PortError, PortRaised
from envport.gaps import Gap, GapKind
from envport.io.profile import Profile, active
from envport.scale import cluster
from envport.targets.reference import Reference
from envport.targets.registry import TargetName
from envport.verifiers.checks import CHECKS, PLAIN, Check
from envport.verifiers.context import Timer, VerifyContext, build_context, port_side
from envport.verifiers.coverage import branches as branch_coverage
from envport.verifiers.coverage.conditions import ConditionMeasure
from envport.verifiers.coverage.determinism import check_reference_determinism
from envport.verifiers.coverage.endings import ending_gaps
from envport.verifiers.draws.constants import source_constants, threshold_warnings
from envport.verifiers.draws.hypo import run_shrink_budget
from envport.verifiers.levels.l3 import lanes as l3_lanes
from envport.verifiers.options import (
    DEFAULT_LEVELS,
    EPISODES_PER_WORKER,
    LEVELS,
    VerifyOptions,
    reference_workers,
)
from envport.verifiers.reporting.divergence import Divergence, LevelResult, VerifyReport
from envport.verifiers.reporting.replay import Kind
from envport.verifiers.reporting.states import port_words
from envport.verifiers.source_review.check import check_review


def verify(
    spec_arg: str,
    port_arg: str,
    options: VerifyOptions,
    shown_as: str | None = None,
    profile: Profile | None = None,
) -> VerifyReport:
    """Check the port in `port_arg`; `shown_as` names it in the report and in replay lines
    when the directory is a stand-in (`RUN@K`, a run's port checked out at iteration K).
    `profile`: where the time goes, as it goes (a progress display watches it)."""
    profile = profile or Profile()
    with active(profile):
        # Setup's section runs from here to the port's load answer (`_loaded`).
        profile.begin("setup")
        ctx = build_context(spec_arg, port_arg, options, shown_as)
        report = _verify(ctx, profile)
    profile.cut()  # a check a port's error stopped keeps the time it took
    report.profile = profile.to_json()
    return report


def _verify(ctx: VerifyContext, profile: Profile) -> VerifyReport:
    options = ctx.options
    report = ctx.report
    # First and alone: the port's source read, not run. A port that could tell it is
    # watched is refused before any check could be fooled by it (docs/isolation.md).
    if options.static_review:
        report.review = check_review(ctx.port, ctx.spec, ctx.target)
        if not report.review.passed:
            report.seconds["total"] = time.perf_counter() - ctx.started
            return report
    lanes = reference_workers(options, ctx.l3) if "l3" in ctx.levels else 0
    if options.executor == "ray" and "l3" in ctx.levels:
        # Joined (or started) before any worker: a missing Ray or an unreachable cluster is
        # a usage error, and L3's lanes are Ray's tasks, not local processes.
        cluster.connect(options.address)
        lanes = 1
    with contextlib.ExitStack() as stack:
        worker = port_side(options, ctx.load, ctx.probes_file)
        stack.enter_context(worker)
        ctx.worker = worker
        if lanes > 1:
            # More lanes: their reference and port workers start now and load in the
            # background while this worker imports the port (and JAX) and L1 and L2 run.
            ctx.lane_workers = l3_lanes.LaneWorkers(
                str(ctx.spec_file.resolve()),
                lanes,
                options.timeout,
                lambda: port_side(options, ctx.load),
            )
            stack.callback(ctx.lane_workers.close)
        ctx.reference = Reference(ctx.spec)
        measure = ctx.branches = _measure(ctx)
        if measure is not None:
            measure.start(branch_coverage.SETUP)
            stack.callback(measure.stop)
            # Condition coverage over the same files, on copies of measured steps.
            ctx.conditions = ConditionMeasure.of(measure.files)
            if ctx.conditions is not None:
                ctx.conditions.install()
                stack.callback(ctx.conditions.uninstall)
        if ctx.levels:
            # Every level below injects states: a reference whose step depends on more than
            # the state would make the port answer for the reference's own dice. Checked on
            # a reference of its own: the levels' starts as a user's freshly made env, whose
            # reset may keep what earlier steps left (MinAtar's sticky `last_action`).
            check_reference_determinism(ctx.spec, Reference(ctx.spec), options.seed)
        report.warnings = threshold_warnings(ctx.spec, source_constants(ctx.reference.env))
        if "l2" in ctx.levels and ctx.whole_port and ctx.target.name != TargetName.RUST:
            # The reference's reset draws, taken while the worker is still importing the port
            # (or kept from an earlier verify, when they were slow to draw).
            from envport.verifiers import kept_resets

            if measure is not None:
                measure.level("l2")
            ctx.reset_sample = kept_resets.draw(ctx.spec, ctx.reference, options.seed)
        report.seconds["setup"] = time.perf_counter() - ctx.started
        timed = Timer(report.seconds)
        running = ""
        stopped_early = False
        try:
            _loaded(ctx, worker.receive)
            profile.end()
            # The plain interpreter starts now and works while the levels run.
            timed.start(PLAIN.name)
            if measure is not None:
                measure.level(PLAIN.name)
            PLAIN.start(ctx, stack)
            # One shrinking budget for the run's failing checks (see ShrinkBudget).
            stack.enter_context(run_shrink_budget())
            for check in CHECKS:
                if check.applies(ctx):
                    running = check.name
                    if check.part is not None:
                        timed.start(check.part)
                    if measure is not None:
                        measure.level(check.name.split(".")[0])
                    profile.begin(check.name, *_progress_unit(check, ctx))
                    found = _run_check(check, ctx)
                    _port_reported(profile, found)
                    profile.end(all(level.passed for level in found))
                    report.levels += found
                    failed = next((lv.name for lv in report.levels if not lv.passed), None)
                    if options.fail_fast and failed is not None:
                        report.stopped_early = _stopped_early(failed, check, ctx)
                        stopped_early = True
                        break
        except PortError as error:
            # Which check was asking says where to look (a port that hangs on a drawn
            # state hangs in L1 or L2, one that hangs in play in L3).
            report.error = f"in {running}: {error}" if running else str(error)
        timed.stop()
    whole_plan = options.only_episode is None and options.episode_batch is None
    time_limit = ctx.reference.max_episode_steps if whole_plan and report.levels else None
    report.gaps = _gaps(report) + ending_gaps(report.levels, time_limit)
    if not options.static_review:
        why = "--no-static-review: a port that behaves only while watched is not ruled out"
        report.gaps.append(Gap(check="review.static", kind=GapKind.NOT_RUN, detail=why))
    if measure is not None:  # stopped as the processes were (the exit stack above)
        analysed = time.perf_counter()
        report.coverage = branch_coverage.analyse(measure, ctx.spec)
        if ctx.conditions is not None:
            report.coverage.conditions = ctx.conditions.analyse()
        report.seconds["coverage"] = time.perf_counter() - analysed
        report.warnings += [
            f"coverage.out_of_scope: {stale} matches no branch line of the reference"
            for stale in report.coverage.stale
        ]
        measured_all = not report.coverage.not_measured
        ran = set(ctx.levels) | set(options.earlier_levels)
        whole = set(DEFAULT_LEVELS) <= ran and not stopped_early  # not cut by --fail-fast
        if whole and report.error is None and measured_all:
            # Only a run of every default level (or the rest of them, after the module
            # checks of a translate run), all measured, answers for the reference's rules; a
            # narrower run (--levels l1) or L3 on Ray shows its figure without calling a
            # branch a gap.
            report.gaps += report.coverage.gaps()
    report.strict = options.strict
    report.passed = not report.diverged and not (options.strict and report.gaps)
    report.seconds["total"] = time.perf_counter() - ctx.started
    return report


_AS_REPORTED = {"explore": "l3.explore", "plain": "l3.plain"}


def _run_check(check: Check, ctx: VerifyContext) -> list[LevelResult]:
    """The check's results. A port that raised where the check could not say on what input
    (the levels that can name it do: L1, L2's sequences and batches) fails the check with
    its own words and the check's replay line; its worker answers the checks after it."""
    try:
        return check.run(ctx)
    except PortRaised as error:
        # Named as the check's own results are (`l3.explore`, `l3.plain`: L3's follow-ups).
        level, _, mode = _AS_REPORTED.get(check.name, check.name).partition(".")
        replay = ctx.replays.get(cast(Kind, level))
        failed = Divergence(
            level=level,
            mode=mode or None,
            message=port_words(error),
            replay=replay.command() if replay is not None else "",
        )
        stopped = f"stopped: the port raised in `{check.name}` before it could say on what input"
        return [
            LevelResult(
                level=level, mode=mode or None, passed=False, divergences=[failed], note=stopped
            )
        ]


def _progress_unit(check: Check, ctx: VerifyContext) -> tuple[str | None, int | None, str]:
    """What a check's progress counts (the profile's counter), how many it will take when
    that is known ahead, and the word a person reads. L1's budget counts its Hypothesis runs
    (each probe's, the transition's) and not its follow-ups (landings, endings), and a failing
    run draws its examples again while it shrinks: the estimate of the time left is an
    estimate. A check without a plan of its own shows its time alone."""
    examples = ctx.options.examples
    if check.name == "l1":
        # One draw serves every check that does not arrange its inputs; each that does
        # (a probe's `arrange`) draws its own.
        probes = [p for p in ctx.probes.values() if ctx.options.module in (None, p.module)]
        runs = 1 + sum(1 for p in probes if p.arrange_fn is not None)
        return "examples", (examples or ctx.spec.levels.l1.examples) * runs, "examples"
    if check.name == "l2":
        return "sequences", examples or ctx.spec.levels.l2.examples, "sequences"
    if check.name == "l3":
        plan = ctx.l3
        if plan.only_episode is not None:
            return "episodes", 1, "episodes"
        if plan.batch is not None:
            return "episodes", plan.batch[1] - plan.batch[0] + 1, "episodes"
        return "episodes", plan.episodes, "episodes"
    return None, None, ""  # its time alone (the reference's resets are in its counts)


def _port_reported(profile: Profile, found: list[LevelResult]) -> None:
    """The port's own account of its time, where it gives one (JAX's compile seconds in
    L3's answers): inside the worker's wait, kept beside it."""
    section = profile.current
    if section is None:
        return
    for level in found:
        for part in ("port_compile", "port_run"):
            if part in level.seconds:
                section.reported[part] = section.reported.get(part, 0.0) + level.seconds[part]


def _stopped_early(failed: str, last: Check, ctx: VerifyContext) -> str:
    rest = ctx.cut_short + [
        check.name for check in CHECKS[CHECKS.index(last) + 1 :] if check.applies(ctx)
    ]
    return f"fail-fast: stopped after {failed} failed; not run: {', '.join(rest) or 'none'}"


def _measure(ctx: VerifyContext) -> branch_coverage.Measure | None:
    """Branch coverage of the reference over a whole plan of a whole port's levels; a
    replay of one episode, one module or a spec with `[coverage] enabled = false` has none."""
    options = ctx.options
    whole = options.only_episode is None and options.episode_batch is None
    if not (whole and ctx.whole_port and options.module is None and ctx.levels):
        return None
    return branch_coverage.Measure.of(ctx.spec, ctx.reference.env)


def _gaps(report: VerifyReport) -> list[Gap]:
    """The levels' gaps, then each check asked for that could not apply to this port."""
    found = [gap for level in report.levels for gap in level.gaps]
    found += [
        Gap(check=name, kind=GapKind.NOT_RUN, detail=why) for name, why in report.not_run.items()
    ]
    return found


def _loaded(ctx: VerifyContext, receive: Callable[[], Any]) -> None:
    """Wait for the port's load answer; a port missing modules the spec lists is checked
    as a whole, without those modules' probes."""
    load_started = time.perf_counter()
    loaded = receive()
    ctx.report.backend = loaded["backend"]
    absent = loaded.get("absent_modules") or []
    if absent:
        ctx.probes = {name: p for name, p in ctx.probes.items() if p.module not in absent}
        ctx.report.notes.append(_unsplit_note(absent, ctx.target.name, ctx.target.entry))
    # Worker start-up and port import not hidden behind the reference's episodes.
    ctx.report.seconds["port_load_wait"] = time.perf_counter() - load_started


def _unsplit_note(absent: list[str], target: str, entry: str) -> str:
    files = ", ".join(f"{name}.py" for name in absent)
    return (
        f"the port is not split into the modules target `{target}` lists (no {files}); it "
        f"exports the contract from `{entry}`, so it is checked as a whole and the L1 probes "
        f"of {', '.join(absent)} are not run"
    )


__all__ = [
    "DEFAULT_LEVELS",
    "EPISODES_PER_WORKER",
    "LEVELS",
    "VerifyOptions",
    "reference_workers",
    "verify",
]
