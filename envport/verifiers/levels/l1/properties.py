"""L1 property checks: each module function, and one whole transition, from drawn states.

Inputs come from hypothesis over the spec's state bounds and the action space, not from
rollouts, so rare states are checked as often as common ones. Each example is one reference
transition from an injected state (the reference probe); the port answers in its worker.
Generic invariants ride along: output dtype and shape, determinism, and jit(f) == f for JAX.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import assume, given
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.errors import Flaky, HypothesisException, Unsatisfiable

from envport.errors import PortError, PortRaised, SpecError
from envport.serve import ops
from envport.structure import derived, violated
from envport.targets.reference import Transition, valid_helpers
from envport.targets.registry import TargetName
from envport.verifiers.draws import DRAWS_FOLDER
from envport.verifiers.draws.hypo import (
    PortGone,
    captured_reports,
    draws_independent_of_the_process,
    hypothesis_settings,
    port_failures_abort,
    shrink_time_limit,
)
from envport.verifiers.draws.kept import kept_or_drawn
from envport.verifiers.draws.landing import unresolved
from envport.verifiers.draws.probes import Probe
from envport.verifiers.draws.rejects import unsatisfiable
from envport.verifiers.draws.strategies import (
    Draws,
    action_strategy,
    state_strategy,
)
from envport.verifiers.levels.l1.examples import (
    Example,
    L1Run,
    answered_alike,
    l1_divergence,
    reference_example,
    rows_check,
    stepped_twice,
)
from envport.verifiers.reporting.divergence import Divergence, LevelResult
from envport.verifiers.reporting.held import Unheld
from envport.verifiers.reporting.states import Divergent, field_diffs

# Eager (un-jitted) JAX is slow; the jit invariant is checked on the first examples only.
JIT_CHECKS = 10
# Drawn examples that took this many seconds are kept for the next verify (draws/kept.py).
KEEP_AFTER = 5.0
# envport's code that decides which examples are drawn and how the reference answers them.
DRAWERS = (
    *(f"envport/verifiers/draws/{f.name}" for f in sorted(DRAWS_FOLDER.glob("*.py"))),
    "envport/verifiers/levels/l1/examples.py",
    "envport/verifiers/levels/l1/properties.py",
    "envport/structure.py",
    "envport/targets/reference.py",
    "envport/targets/randomness.py",
)


def excused(run: L1Run, example: Example, fields: list[str], changed: Any) -> bool:
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


# A check's verdict on a batch of examples the reference answered (`reference_example`, inside
# the hypothesis test: a state the reference refuses is no draw), one round trip for all,
# raising Divergent at the first that differs (`first` numbers the batch's first example
# from 1: the jit check takes the first few).
Judge = Callable[[list[Example], int], None]


def _hypothesis_test(
    run: L1Run,
    body: Callable[[dict[str, np.ndarray], Any], None],
    arrange: Callable[..., tuple[dict[str, Any], Any]] | None,
    shrink: bool,
    name: str = "",
) -> Callable[[], None]:
    """The check's hypothesis test over drawn states and actions; `arrange` (a probe's, see
    draws/probes.py) turns each drawn input into the one checked."""
    draws = run.draws or Draws()
    helpers = valid_helpers(run.spec)

    def arranged(state: dict[str, np.ndarray], action: Any, data: st.DataObject) -> None:
        assert arrange is not None

        def pick(low: int, high: int) -> int:
            return int(data.draw(st.integers(int(low), int(high))))

        try:
            state, action = arrange(state, action, pick)
        except HypothesisException:
            raise  # hypothesis's own (a draw past its budget, an assumption)
        except Exception as error:
            # The probe is the spec's harness: its failure is the spec's to fix, one line.
            raise SpecError(
                f"l1.{name}: the probe's `arrange` raised {type(error).__name__}: {error}"
                " (fix the probe, or the harness files it loads)"
            ) from None
        # An arranged state is made up as a drawn one is: its derived fields (`state.derive`)
        # follow from the fields the probe set, so it is a state the spec allows.
        state = derived(run.spec.state, state, helpers)
        assume(violated(run.spec.state, state, helpers) is None)
        body(state, action)

    strategies: dict[str, st.SearchStrategy[Any]] = {
        "state": state_strategy(run.spec, draws),
        "action": action_strategy(run.reference.action_space, draws),
    }
    test: Callable[..., None] = body
    if arrange is not None:
        strategies["data"], test = st.data(), arranged
    return hypothesis_seed(run.seed)(
        hypothesis_settings(run.examples, shrink)(given(**strategies)(test))
    )


def _drawn(run: L1Run, arrange: Callable[..., Any] | None, name: str) -> list[Example]:
    """Every example hypothesis draws for the check, answered by the reference alone. Its
    draws do not depend on the port's answers (a failure only stops them), so this is the
    sequence the one-at-a-time test below walks, up to its first failure. They follow from
    the spec, the seed, the number asked and the probe's `arrange` alone, so a slow draw is
    kept for the next verify of the spec (draws/kept.py): a repair's, another mutant's."""

    def draw() -> list[Example]:
        drawn: list[Example] = []

        def collect(state: dict[str, np.ndarray], action: Any) -> None:
            drawn.append(reference_example(run, state, action))

        test = _hypothesis_test(run, collect, arrange, False, name)
        with captured_reports(), draws_independent_of_the_process():
            test()
        return drawn

    what = f"l1 examples seed {run.seed} n {run.examples}"
    if arrange is not None:  # the probe's own arrangement: its own draws
        what += f" arranged by {name}"
    return kept_or_drawn(
        run.spec,
        DRAWERS,
        what,
        draw,
        lambda kept: isinstance(kept, list) and all(isinstance(e, Example) for e in kept),
        KEEP_AFTER,
    )


def drive(
    run: L1Run,
    judge: Judge,
    name: str,
    module: str | None,
    arrange: Callable[..., tuple[dict[str, Any], Any]] | None = None,
) -> LevelResult:
    """Run one check: every drawn example judged in one batch; when one differs, hypothesis
    walks the examples one at a time again to shrink the failure, which becomes a divergence
    with the shrunk input."""
    started = time.perf_counter()
    level = LevelResult(level="l1", mode=name, passed=True)
    try:
        if arrange is not None:
            drawn = _drawn(run, arrange, name)
        else:
            drawn = run.drawn = run.drawn if run.drawn is not None else _drawn(run, None, name)
    except Unsatisfiable:
        raise unsatisfiable(f"l1.{name}") from None
    found: Divergent | None = None
    try:
        # A port that dies or hangs on the batch ends the verify (PortError); one that
        # raises fails this check on the example it raised on, found below.
        judge(drawn, 1)
    except Divergent as failure:
        found = failure
    except PortRaised as error:
        found = Divergent.raised(error, {}) if run.shrink else _first_alone(judge, drawn, error)
    if found is None:
        level.episodes = level.steps_compared = len(drawn)
    elif not run.shrink:
        # Unshrunk, the first failing draw is the verdict the one-at-a-time walk would give.
        _diverged(run, level, found, name, module)
        level.episodes = level.steps_compared = len(drawn)
    else:
        _one_at_a_time(run, judge, name, module, arrange, level, found)
    level.seconds = {"total": time.perf_counter() - started}
    return level


def _first_alone(judge: Judge, drawn: list[Example], error: PortRaised) -> Divergent:
    """Unshrunk: the first drawn example the port fails alone (the batch's raise, without
    an input, when every example passes alone)."""
    for number, example in enumerate(drawn, 1):
        try:
            judge([example], number)
        except Divergent as failure:
            return failure
        except PortRaised as alone:
            return Divergent.raised(alone, example.inputs())
    return Divergent.raised(error, {})


def _one_at_a_time(
    run: L1Run,
    judge: Judge,
    name: str,
    module: str | None,
    arrange: Callable[..., tuple[dict[str, Any], Any]] | None,
    level: LevelResult,
    in_batch: Divergent,
) -> None:
    counter = {"examples": 0}

    def counted(state: dict[str, np.ndarray], action: Any) -> None:
        counter["examples"] += 1
        example = reference_example(run, state, action)
        with port_failures_abort():
            try:
                judge([example], counter["examples"])
            except PortRaised as error:
                # A raise is a counterexample like a differing answer: Hypothesis shrinks it.
                raise Divergent.raised(error, example.inputs()) from None

    test = _hypothesis_test(run, counted, arrange, run.shrink, name)
    try:
        with (
            shrink_time_limit(),
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
        _diverged(run, level, failure, name, module)
    except Flaky as error:
        level.passed = False
        level.divergences.append(
            Divergence(level="l1", mode=name, module=module, message=f"not reproducible: {error}")
        )
    else:
        # Alone, every example passed: what failed was the batch itself.
        _diverged(run, level, in_batch, name, module)
        level.divergences[-1].message += " (in a batch of every drawn example; alone it passes)"
    level.episodes = level.steps_compared = counter["examples"]


def _diverged(
    run: L1Run, level: LevelResult, failure: Divergent, name: str, module: str | None
) -> None:
    level.passed = False
    level.diverged_episodes = 1
    level.divergences.append(
        l1_divergence(
            run,
            name,
            module,
            failure.inputs,
            failure.inputs.get("action"),
            failure.diffs,
            str(failure),
        )
    )


def check_probe(run: L1Run, probe: Probe, probes_file: Path, whole_port: bool) -> LevelResult:
    """One module function through its probe. With the whole port loaded, the states it
    says it cannot hold (`can_hold`, an entry's answer) are counted, not probed; a module
    checked alone has no entry to ask."""
    assert probe.expect_fn is not None
    expect_fn = probe.expect_fn

    # A probe's states, drawn or arranged, are made up: those the port says it cannot
    # hold are counted (a gap, past the ceiling a failure), not probed.
    unheld = Unheld(f"l1.{probe.name}", run.spec.levels.unheld_ceiling)

    def judge(examples: list[Example], first: int) -> None:
        if not examples:
            return
        if whole_port:
            examples = unheld.kept(run.worker, examples, [e.before for e in examples])
            if not examples:
                return
        answer = run.worker.request(
            ops.Probe(
                probes_file=str(probes_file),
                name=probe.name,
                befores=[e.before for e in examples],
                actions=[np.asarray(e.action) for e in examples],
                afters=[e.after for e in examples] if probe.reads_after else None,
                jax=run.backend == TargetName.JAX,
                eager_first=max(0, JIT_CHECKS - first + 1),
                noises=None
                if examples[0].transition.noise is None
                else [e.transition.noise for e in examples],
            )
        )
        for index, example in enumerate(examples):
            _judge_probe(run, probe.name, expect_fn, example, answer, index)

    level = drive(run, judge, probe.name, probe.module, probe.arrange_fn)
    level.steps_compared = max(0, level.steps_compared - unheld.refused)
    unheld.report(level)
    return level


def _judge_probe(
    run: L1Run, name: str, expect_fn: Callable[..., Any], example: Example, answer: dict, index: int
) -> None:
    before, action, after, transition = (
        example.before,
        example.action,
        example.after,
        example.transition,
    )
    expected = expect_fn(before, action, after, transition)
    first = answer["first"][index]
    inputs = example.inputs()
    diffs = field_diffs(run.spec, expected, first)

    def changed(moved: dict, moved_transition: Transition, moved_after: dict) -> set[str]:
        again = expect_fn(moved, action, moved_after, moved_transition)
        return {d.field for d in field_diffs(run.spec, expected, again)}

    if diffs and not excused(run, example, [d.field for d in diffs], changed):
        raise Divergent(diffs, inputs, f"{name} differs from the reference")
    unstable = _identical(first, answer["second"][index])
    if unstable:
        raise Divergent([], inputs, f"{name} is not deterministic in {unstable}")
    if index < len(answer["eager"]):
        diffs = field_diffs(run.spec, answer["eager"][index], first, label="jit ")
        if diffs:
            raise Divergent(diffs, inputs, f"jit({name}) differs from {name}")


__all__ = ["Example", "L1Run", "PortError", "answered_alike", "rows_check", "stepped_twice"]
