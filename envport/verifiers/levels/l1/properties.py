"""L1 property checks: each module function, and one whole transition, from drawn states.

Inputs come from hypothesis over the spec's state bounds and the action space, not from
rollouts, so rare states are checked as often as common ones. Each example is one reference
transition from an injected state (the reference probe); the port answers in its worker.
Generic invariants ride along: output dtype and shape, determinism, and jit(f) == f for JAX.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import assume, given
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.errors import Flaky, Unsatisfiable

from envport.errors import PortError
from envport.serve import ops
from envport.serve.ops import Requester
from envport.spec import PortSpec
from envport.structure import violated
from envport.targets.randomness import example_seed, noise_args
from envport.targets.reference import Reference, Transition, valid_helpers
from envport.targets.registry import TargetName
from envport.verifiers.draws.hypo import (
    SHRINK_SECONDS,
    PortGone,
    captured_reports,
    draws_independent_of_the_process,
    hypothesis_settings,
    port_failures_abort,
    shrink_time_limit,
)
from envport.verifiers.draws.landing import unresolved
from envport.verifiers.draws.probes import Probe
from envport.verifiers.draws.rejects import reference_rejects, unsatisfiable
from envport.verifiers.draws.strategies import (
    Draws,
    action_strategy,
    draws_for,
    state_strategy,
)
from envport.verifiers.reporting.compare import (
    STEP_FIELDS,
    Steps,
    contract_problems,
    divergent_steps,
)
from envport.verifiers.reporting.divergence import Divergence, LevelResult
from envport.verifiers.reporting.replay import Replay
from envport.verifiers.reporting.states import Divergent, field_diffs

# Eager (un-jitted) JAX is slow; the jit invariant is checked on the first examples only.
JIT_CHECKS = 10


@dataclass
class L1Run:
    spec: PortSpec
    reference: Reference
    worker: Requester
    backend: str | None
    examples: int
    seed: int
    replay: Replay
    shrink: bool = True
    draws: Draws | None = None  # edge and out-of-range draws (None: read from the reference)

    def __post_init__(self) -> None:
        if self.draws is None:
            self.draws = draws_for(self.spec, self.reference)


def rows_check(
    mode: str,
    build: Callable[[], list[Any]],
    judge: Callable[[LevelResult, list[Any]], None],
) -> LevelResult:
    """An L1 check of rows built on the reference (landings, a game's endings): each row
    one compared step, judged together, timed."""
    started = time.perf_counter()
    level = LevelResult(level="l1", mode=mode, passed=True)
    rows = build()
    level.episodes = level.steps_compared = len(rows)
    if rows:
        judge(level, rows)
    level.seconds = {"total": time.perf_counter() - started}
    return level


@dataclass
class Example:
    """One drawn input, as the reference took it."""

    before: dict[str, np.ndarray]
    action: Any
    transition: Transition
    after: dict[str, np.ndarray]

    @property
    def draw_seed(self) -> int:
        return example_seed(self.before, self.action)

    def inputs(self) -> dict[str, Any]:
        return {**self.before, "action": self.action, **noise_args(self.transition.noise)}


def _transition(run: L1Run, state: dict[str, np.ndarray], action: Any) -> Example:
    """Reset, inject the drawn state, step once: the reference's answer for this input."""
    run.reference.reset(run.seed)
    current = run.reference.read_state()
    with reference_rejects():
        run.reference.write_state({**current, **state})
        before = run.reference.read_state()
        # A stochastic reference draws from a stream that is a function of the example.
        run.reference.reseed_draws(example_seed(before, action))
        transition = run.reference.step(action)
        after = run.reference.read_state()
    return Example(before, action, transition, after)


def _excused(run: L1Run, example: Example, fields: list[str], changed: Any) -> bool:
    """Every differing output is one the reference itself cannot decide at float32
    resolution from this start state (see landing.py): not held against the port."""
    if not fields or run.spec.randomness is not None:
        return False
    undecided = unresolved(
        run.reference, example.before, example.action, run.seed, example.draw_seed, changed
    )
    return set(fields) <= undecided


def _identical(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> list[str]:
    return [k for k in a if k not in b or not np.array_equal(a[k], b[k], equal_nan=True)]


def _drive(
    run: L1Run,
    check: Callable[..., None],
    name: str,
    module: str | None,
    arrange: Callable[..., tuple[dict[str, Any], Any]] | None = None,
) -> LevelResult:
    """Run one hypothesis check; a failure becomes a divergence with the shrunk input.
    `arrange` (a probe's, see draws/probes.py) turns each drawn input into the one checked."""
    started = time.perf_counter()
    counter = {"examples": 0}

    draws = run.draws or Draws()
    helpers = valid_helpers(run.spec)

    def counted(state: dict[str, np.ndarray], action: Any) -> None:
        counter["examples"] += 1
        with port_failures_abort():
            check(state, action, counter["examples"])

    def arranged(state: dict[str, np.ndarray], action: Any, data: st.DataObject) -> None:
        assert arrange is not None

        def pick(low: int, high: int) -> int:
            return int(data.draw(st.integers(int(low), int(high))))

        state, action = arrange(state, action, pick)
        assume(violated(run.spec.state, state, helpers) is None)
        counted(state, action)

    strategies: dict[str, st.SearchStrategy[Any]] = {
        "state": state_strategy(run.spec, draws),
        "action": action_strategy(run.reference.action_space, draws),
    }
    body: Callable[..., None] = counted
    if arrange is not None:
        strategies["data"], body = st.data(), arranged
    test = hypothesis_seed(run.seed)(
        hypothesis_settings(run.examples, run.shrink)(given(**strategies)(body))
    )
    level = LevelResult(level="l1", mode=name, passed=True)
    try:
        with (
            shrink_time_limit(SHRINK_SECONDS),
            captured_reports(),
            draws_independent_of_the_process(),
        ):
            test()
    except PortGone as gone:
        raise gone.error from None
    except Unsatisfiable:
        raise unsatisfiable(f"l1.{name}") from None
    except Divergent as failure:
        # Hypothesis re-runs the shrunk example last, so this is the minimal input.
        level.passed = False
        level.diverged_episodes = 1
        level.divergences.append(
            Divergence(
                level="l1",
                mode=name,
                module=module,
                seed=run.seed,
                start_state={k: np.asarray(v).tolist() for k, v in failure.inputs.items()},
                action_prefix=[np.asarray(failure.inputs.get("action")).tolist()],
                fields=failure.diffs,
                message=str(failure),
                replay=run.replay.at(module=module or "").command(),
                replay_of=run.replay.at(module=module or ""),
            )
        )
    except Flaky as error:
        level.passed = False
        level.divergences.append(
            Divergence(level="l1", mode=name, module=module, message=f"not reproducible: {error}")
        )
    level.episodes = counter["examples"]
    level.steps_compared = counter["examples"]
    level.seconds = {"total": time.perf_counter() - started}
    return level


def check_probe(run: L1Run, probe: Probe, probes_file: Path) -> LevelResult:
    assert probe.expect_fn is not None
    expect_fn = probe.expect_fn

    def check(state: dict[str, np.ndarray], action: Any, count: int) -> None:
        example = _transition(run, state, action)
        before, after, transition = example.before, example.after, example.transition
        expected = expect_fn(before, action, after, transition)
        answer = run.worker.request(
            ops.Probe(
                probes_file=str(probes_file),
                name=probe.name,
                before=before,
                action=np.asarray(action),
                after=after if probe.reads_after else None,
                jax=run.backend == TargetName.JAX,
                check_jit=count <= JIT_CHECKS,
                noise=transition.noise,
            )
        )
        inputs = example.inputs()
        diffs = field_diffs(run.spec, expected, answer["first"])

        def changed(moved: dict, moved_transition: Transition, moved_after: dict) -> set[str]:
            again = expect_fn(moved, action, moved_after, moved_transition)
            return {d.field for d in field_diffs(run.spec, expected, again)}

        if diffs and not _excused(run, example, [d.field for d in diffs], changed):
            raise Divergent(diffs, inputs, f"{probe.name} differs from the reference")
        unstable = _identical(answer["first"], answer["second"])
        if unstable:
            raise Divergent([], inputs, f"{probe.name} is not deterministic in {unstable}")
        if "eager" in answer:
            diffs = field_diffs(run.spec, answer["eager"], answer["first"], label="jit ")
            if diffs:
                raise Divergent(diffs, inputs, f"jit({probe.name}) differs from {probe.name}")

    return _drive(run, check, probe.name, probe.module, probe.arrange_fn)


def check_transition(run: L1Run, entry: str) -> LevelResult:
    """The whole step from drawn states: obs, reward, terminated, truncated."""

    def check(state: dict[str, np.ndarray], action: Any, count: int) -> None:
        example = _transition(run, state, action)
        before, transition = example.before, example.transition
        stacked = {k: np.stack([v, v]) for k, v in before.items()}
        actions = np.asarray([action, action])
        noise = None if transition.noise is None else np.stack([transition.noise] * 2)
        answer = run.worker.request(ops.StepBatch(states=stacked, actions=actions, noise=noise))
        expected = Steps.single(transition)
        first = Steps.of(answer, slice(0, 1))
        inputs = example.inputs()
        problems = contract_problems(expected.obs, first.obs)
        if problems:
            raise Divergent(problems, inputs, "observation dtype or shape breaks the contract")
        found = divergent_steps(run.spec, expected, first, False, np.asarray([0]))

        def changed(moved: dict, moved_transition: Transition, moved_after: dict) -> set[str]:
            again = divergent_steps(
                run.spec, expected, Steps.single(moved_transition), False, np.asarray([0])
            )
            return {d.field for _, diffs in again for d in diffs}

        if found and not _excused(run, example, [d.field for d in found[0][1]], changed):
            raise Divergent(found[0][1], inputs, "one step from this state differs")
        if not all(np.array_equal(answer[k][0], answer[k][1], equal_nan=True) for k in STEP_FIELDS):
            raise Divergent([], inputs, "the same step twice gave different answers")
        if run.backend == TargetName.JAX and count <= JIT_CHECKS:
            eager = run.worker.request(
                ops.StepBatch(states=stacked, actions=actions, eager=True, noise=noise)
            )
            eager_steps = Steps.of(eager, slice(0, 1))
            found = divergent_steps(run.spec, first, eager_steps, False, np.asarray([0]))
            if found:
                raise Divergent(found[0][1], inputs, "jit(step) differs from step")

    return _drive(run, check, "transition", entry)


__all__ = ["L1Run", "PortError"]
