"""The checks `verify` runs, in order, each behind one interface over one context.

A check says whether it applies to this run (`applies`) and runs (`run`), answering level
results; `verify` runs the applicable ones in the order of `CHECKS` and puts their results
in the report in that order. `part` names the wall-time bucket a check's time goes to
(None: the bucket of the check before it, as a level's follow-up checks are timed with it).
"""

from __future__ import annotations

import contextlib
import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable
from functools import partial
from types import ModuleType
from typing import ClassVar

from envport.errors import EnvportError, PortRaised
from envport.targets.registry import TARGET_NAMES, TargetName, target
from envport.verifiers import explore
from envport.verifiers.context import VerifyContext
from envport.verifiers.coverage.bounds import Coverage
from envport.verifiers.levels import reverse
from envport.verifiers.levels.l1 import endings as l1_endings
from envport.verifiers.levels.l1 import landings as l1_landings
from envport.verifiers.levels.l1 import properties as l1
from envport.verifiers.levels.l1 import reached as l1_reached
from envport.verifiers.levels.l1 import transition as l1_transition
from envport.verifiers.levels.l1.warm import warm_transition
from envport.verifiers.levels.l2 import run as l2
from envport.verifiers.levels.l3 import cases
from envport.verifiers.levels.l3 import lanes as l3_lanes
from envport.verifiers.levels.l3 import on_ray as l3_ray
from envport.verifiers.levels.l3 import raised as l3_raised
from envport.verifiers.levels.l3 import replay as l3_replay
from envport.verifiers.reporting.divergence import LevelResult
from envport.verifiers.reporting.replay import Replay
from envport.verifiers.time_limit import to_the_limit


class Check(ABC):
    name: ClassVar[str]
    part: ClassVar[str | None] = None

    @abstractmethod
    def applies(self, ctx: VerifyContext) -> bool: ...

    @abstractmethod
    def run(self, ctx: VerifyContext) -> list[LevelResult]: ...


def _statistics(module: str, what: str) -> ModuleType:
    """A level built on scipy and statsmodels (the `stats` extra), imported when it runs;
    `module` is its dotted path below envport.verifiers (levels.l1.noise)."""
    try:
        return importlib.import_module(f"envport.verifiers.{module}")
    except ImportError as error:
        raise EnvportError(
            f"{what} needs scipy and statsmodels ({error.name} is missing): "
            "pip install 'envport[stats]'"
        ) from None


def _replayed(results: list[LevelResult], replay: Replay) -> list[LevelResult]:
    """Attach the replay as data to the divergences whose line is this replay's."""
    line = replay.command()
    for level in results:
        for divergence in level.divergences:
            if divergence.replay == line and divergence.replay_of is None:
                divergence.replay_of = replay
    return results


def _own_randomness(ctx: VerifyContext) -> bool:
    """The loaded backend draws its own noise and resets itself (JAX, NumPy)."""
    backend = ctx.backend
    return backend in TARGET_NAMES and target(backend or "").own_randomness


class L1Probes(Check):
    """Each exported function through its probe; then the whole transition and its landings."""

    name = "l1"
    part = "l1"

    def applies(self, ctx: VerifyContext) -> bool:
        return "l1" in ctx.levels

    def run(self, ctx: VerifyContext) -> list[LevelResult]:
        options, config = ctx.options, ctx.spec.levels
        run = l1.L1Run(
            ctx.spec,
            ctx.reference,
            ctx.worker,
            ctx.backend or ctx.target.name,
            options.examples or config.l1.examples,
            options.seed,
            ctx.replays["l1"],
            options.shrink,
        )
        if ctx.at_entry:
            # The port compiles L1's step while the driver draws the states it will take.
            warm_transition(run)
        parts: list[tuple[str, Callable[[], LevelResult]]] = []
        for probe in ctx.probes.values():
            if options.module is None or probe.module == options.module:
                assert ctx.probes_file is not None
                check = partial(l1.check_probe, run, probe, ctx.probes_file, ctx.at_entry)
                parts.append((f"l1.{probe.name}", check))
        if ctx.at_entry:
            entry = ctx.target.entry
            parts.append(("l1.transition", partial(l1_transition.check_transition, run, entry)))
            if l1_landings.applies(run):
                parts.append(("l1.landings", partial(l1_landings.check_landings, run, entry)))
            if l1_endings.applies(run):
                parts.append(("l1.endings", partial(l1_endings.check_endings, run, entry)))
            if l1_reached.applies(run):
                parts.append(("l1.reached", partial(l1_reached.check_reached, run, entry)))
        results = []
        for index, (_, part) in enumerate(parts):
            results.append(part())
            # --fail-fast ends L1 at its first failing part: a mutant's verdict (the
            # self-check's tests) needs one divergence, and L1's parts each draw their own
            # states, so the rest would cost as much again each.
            if options.fail_fast and not results[-1].passed:
                ctx.cut_short += [name for name, _ in parts[index + 1 :]]
                break
        return results


class L1Noise(Check):
    """A stochastic port's own noise sampler against the reference's draws, and the step
    users call, which draws its own noise."""

    name = "l1.noise"

    def applies(self, ctx: VerifyContext) -> bool:
        return "l1" in ctx.levels and ctx.spec.randomness is not None and ctx.at_entry

    def run(self, ctx: VerifyContext) -> list[LevelResult]:
        entry, seed = ctx.target.entry, ctx.options.seed
        replay = ctx.replays["l1"].at(module=entry)
        noise_check = _statistics("levels.l1.noise", "a stochastic env's sampler check")
        found = [
            noise_check.check_sampler(
                ctx.spec, ctx.reference, ctx.worker, seed, replay.command(), entry
            )
        ]
        if _own_randomness(ctx):
            sampled = _statistics("levels.l1.sampled_step", "a stochastic env's step check")
            found.append(
                sampled.check_sampled_step(
                    ctx.spec, ctx.reference, ctx.worker, ctx.backend, seed, replay.command(), entry
                )
            )
        return _replayed(found, replay)


class L2Interaction(Check):
    name = "l2"
    part = "l2"

    def applies(self, ctx: VerifyContext) -> bool:
        return "l2" in ctx.levels

    def run(self, ctx: VerifyContext) -> list[LevelResult]:
        replay = ctx.replays["l2"]
        found = l2.run_l2(
            ctx.spec,
            ctx.reference,
            ctx.worker,
            ctx.backend,
            examples=ctx.options.examples or ctx.spec.levels.l2.examples,
            seed=ctx.options.seed,
            replay=replay.command(),
            shrink=ctx.options.shrink,
            bench_sizes=ctx.options.bench_sizes,
        )
        return _replayed(found, replay)


class L2UserPaths(Check):
    """L2's checks of what users call rather than what the harness injects: the port's own
    reset, fresh and after play, and (NumPy) its VectorEnv's autoreset and partial resets
    against Gymnasium's."""

    name = "l2.user_paths"

    def applies(self, ctx: VerifyContext) -> bool:
        return "l2" in ctx.levels and ctx.reset_sample is not None and _own_randomness(ctx)

    def run(self, ctx: VerifyContext) -> list[LevelResult]:
        from envport.verifiers.levels.l2 import reset as reset_check
        from envport.verifiers.levels.l2 import reset_after
        from envport.verifiers.levels.l2 import state_api as state_api_check
        from envport.verifiers.vector import check as vector_check

        sample, seed, replay = ctx.reset_sample, ctx.options.seed, ctx.replays["l2"]
        assert sample is not None
        line = replay.command()
        # What follows l2.reset, by name.
        rest: dict[str, Callable[[], LevelResult]] = {}
        rest["l2.state_api"] = lambda: state_api_check.check_state_api(
            ctx.reference, ctx.worker, seed, line
        )
        # A game's reset is envport's own around the port's `init` (targets.game_port).
        if ctx.spec.game is None:
            rest["l2.reset_after_play"] = lambda: reset_after.check_reset_after_play(
                ctx.spec, ctx.reference, ctx.worker, seed, line
            )
        # A game's VectorEnv is envport's own autoreset around the port's functions
        # (envport.targets.game_port): checking it would judge envport, not the port.
        if target(ctx.backend or "").vector_env and ctx.spec.game is None:
            rest["l2.vector"] = lambda: vector_check.check_vector(
                ctx.spec, ctx.worker, sample, seed, line
            )
        found = [reset_check.check_reset(ctx.spec, ctx.worker, sample, seed, line)]
        if ctx.options.fail_fast and not found[0].passed:
            # A generated world's vector check is minutes: the rest is not run, and the
            # stop says so.
            ctx.cut_short += list(rest)
            return _replayed(found, replay)
        found += [check() for check in rest.values()]
        return _replayed(found, replay)


class ProposedCases(Check):
    """The model's proposed cases, each a start state and actions, with the reference as oracle."""

    name = "cases"
    part = "cases"

    def applies(self, ctx: VerifyContext) -> bool:
        return ctx.options.cases is not None and ctx.whole_port and not ctx.options.reverse

    def run(self, ctx: VerifyContext) -> list[LevelResult]:
        replay, directory = ctx.replays["cases"], ctx.options.cases
        assert directory is not None
        return cases.run_cases(ctx.spec, ctx.reference, ctx.worker, directory, replay)


class L3Rollouts(Check):
    name = "l3"
    part = "l3"

    def applies(self, ctx: VerifyContext) -> bool:
        return "l3" in ctx.levels

    def run(self, ctx: VerifyContext) -> list[LevelResult]:
        replay, options = ctx.replays["l3"], ctx.l3
        whole = options.only_episode is None and options.batch is None
        # The bounds' coverage of the states play reaches, over the whole plan (a replay of
        # a few episodes says nothing about it).
        coverage = Coverage.of(ctx.spec) if whole and ctx.spec.state.bounds else None
        if ctx.options.executor == "ray":
            if ctx.branches is not None:
                ctx.branches.not_measured.append("L3's episodes on Ray")
            found = l3_ray.run_l3(
                ctx.spec,
                str(ctx.spec_file.resolve()),
                ctx.load,
                options,
                replay,
                ctx.options.timeout,
                ctx.options.address,
                ctx.options.workers,
                coverage,
            )
        else:
            try:
                found = l3_lanes.run_l3(
                    ctx.spec,
                    options,
                    replay,
                    ctx.worker,
                    ctx.reference,
                    ctx.lane_workers,
                    coverage,
                    ctx.branches,
                )
            except PortRaised as error:  # the episode and step it raised on, played again
                return [
                    l3_raised.raised_level(
                        ctx.spec, options, replay, ctx.worker, ctx.reference, error
                    )
                ]
        if whole:
            # Not a replay itself: each replay line must show its divergence again.
            l3_replay.confirm_replays(ctx.spec, options, replay, ctx.worker, ctx.reference, found)
        if coverage is not None and coverage.states:
            ctx.report.warnings += coverage.warnings()
            found.append(coverage.level(ctx.options.strict_bounds))
        return found


class Explore(Check):
    """After L3: the reference explored toward the branches no level reached (l3.explore)."""

    name = "explore"

    def applies(self, ctx: VerifyContext) -> bool:
        whole = ctx.l3.only_episode is None and ctx.l3.batch is None
        return "l3" in ctx.levels and whole and ctx.whole_port and explore.applies(ctx)

    def run(self, ctx: VerifyContext) -> list[LevelResult]:
        return [explore.run_explore(ctx)]


class L4Transfer(Check):
    name = "l4"
    part = "l4"

    def applies(self, ctx: VerifyContext) -> bool:
        return "l4" in ctx.levels and ctx.whole_port

    def run(self, ctx: VerifyContext) -> list[LevelResult]:
        replay = ctx.replays["l4"]
        l4 = _statistics("levels.l4.equivalence", "--levels l4")
        found = l4.run_l4(ctx.spec, ctx.reference, ctx.worker, ctx.options.seed, replay.command())
        return _replayed([found], replay)


class ReverseRollouts(Check):
    """A port that cannot load a state: the reference started from the port's own starts."""

    name = "reverse"

    def applies(self, ctx: VerifyContext) -> bool:
        return ctx.options.reverse

    def run(self, ctx: VerifyContext) -> list[LevelResult]:
        ctx.report.not_run = reverse.not_applicable(
            ctx.requested, ctx.options.cases is not None, ctx.spec.randomness is not None
        )
        found = reverse.run_reverse(
            ctx.spec, ctx.reference, ctx.worker, ctx.l3, ctx.replays["reverse"]
        )
        return found + to_the_limit(ctx, found)


class PlainReplay(Check):
    """Last: a sample of L3's steps, the port imported by a plain interpreter (`plain`)."""

    name = "plain"
    part = "plain"

    def applies(self, ctx: VerifyContext) -> bool:
        whole = ctx.l3.only_episode is None and ctx.l3.batch is None
        return (
            "l3" in ctx.levels
            and whole
            and ctx.whole_port
            and ctx.report.backend in (TargetName.NUMPY, TargetName.JAX)
            and ctx.options.port_server is None
            and not ctx.options.reverse
        )

    def run(self, ctx: VerifyContext) -> list[LevelResult]:
        from envport.verifiers.plain import run_plain

        # Started by `verify` once the backend was known (PLAIN.start).
        assert ctx.plain is not None
        return [run_plain(ctx, ctx.plain)]

    def start(self, ctx: VerifyContext, stack: contextlib.ExitStack) -> None:
        """Start the plain interpreter now, if this check will run, so its start and the
        port's import overlap the levels; `stack` ends it whatever happens."""
        if self.applies(ctx):
            from envport.verifiers.plain import started

            ctx.plain = stack.enter_context(started(ctx))


PLAIN = PlainReplay()


CHECKS: tuple[Check, ...] = (
    L1Probes(),
    L1Noise(),
    # The port's own reset before the harness-driven L2: under --fail-fast a wrong reset
    # (a generated world's) is named in seconds, before the batch sizes' minutes.
    L2UserPaths(),
    L2Interaction(),
    ProposedCases(),
    L3Rollouts(),
    Explore(),
    L4Transfer(),
    ReverseRollouts(),
    PLAIN,
)
