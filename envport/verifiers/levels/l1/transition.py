"""L1's whole-transition check: one step from each drawn state, every output and the state
the step leaves, against the reference's (its draws and drive in properties.py). Drawn
states the port says it cannot hold are counted, not stepped (reporting/held.py)."""

from __future__ import annotations

import dataclasses

import numpy as np

from envport.serve import ops
from envport.targets.reference import Transition
from envport.targets.registry import TargetName
from envport.verifiers.levels.l1.examples import (
    Example,
    L1Run,
    answered_alike,
    stepped_twice,
    unlike_twins,
)
from envport.verifiers.levels.l1.properties import JIT_CHECKS, drive, excused
from envport.verifiers.reporting.after import LABEL, after_diffs, outputs_only
from envport.verifiers.reporting.compare import Steps, contract_problems, divergent_steps
from envport.verifiers.reporting.divergence import LevelResult
from envport.verifiers.reporting.held import Unheld
from envport.verifiers.reporting.states import Divergent, field_diffs


def check_transition(run: L1Run, entry: str) -> LevelResult:
    """The whole step from drawn states: obs, reward, terminated, truncated, and the state
    the step leaves behind where the port reads it back (reporting/after.py)."""
    unread: list[bool] = []
    unheld = Unheld("l1.transition", run.spec.levels.unheld_ceiling)

    def judge(examples: list[Example], first: int) -> None:
        if not examples:
            return
        # Drawn states the port says it cannot hold are counted, not stepped.
        examples = unheld.kept(run.worker, examples, [e.before for e in examples])
        if not examples:
            return
        batch = stepped_twice(
            [e.before for e in examples],
            [e.action for e in examples],
            [e.transition.noise for e in examples],
        )
        answer = run.worker.request(dataclasses.replace(batch, read_state=True))
        if answer.get("state") is None:
            unread.append(True)
        eager_rows = max(0, min(len(examples), JIT_CHECKS - first + 1))
        eager = None
        if run.backend == TargetName.JAX and eager_rows:
            rows = slice(0, eager_rows)
            eager = run.worker.request(
                ops.StepBatch(
                    states={k: v[rows] for k, v in batch.states.items()},
                    actions=batch.actions[rows],
                    eager=True,
                    noise=None if batch.noise is None else batch.noise[rows],
                )
            )
        for index, example in enumerate(examples):
            _judge_step(run, example, answer, index, len(examples), eager)

    level = drive(run, judge, "transition", entry)
    if unread:
        level.gaps.append(outputs_only("l1.transition"))
    level.steps_compared = max(0, level.steps_compared - unheld.refused)
    unheld.report(level)
    return level


def _judge_step(
    run: L1Run, example: Example, answer: dict, index: int, count: int, eager: dict | None
) -> None:
    transition = example.transition
    expected = Steps.single(transition)
    row = slice(index, index + 1)
    first = Steps.of(answer, row)
    inputs = example.inputs()
    problems = contract_problems(expected.obs, first.obs)
    if problems:
        raise Divergent(problems, inputs, "observation dtype or shape breaks the contract")
    found = divergent_steps(run.spec, expected, first, False, np.asarray([0]))

    def changed(moved: dict, moved_transition: Transition, moved_after: dict) -> set[str]:
        again = divergent_steps(
            run.spec, expected, Steps.single(moved_transition), False, np.asarray([0])
        )
        left = field_diffs(run.spec, example.after, moved_after, label=LABEL)
        return {d.field for _, diffs in again for d in diffs} | {d.field for d in left}

    if found and not excused(run, example, [d.field for d in found[0][1]], changed):
        raise Divergent(found[0][1], inputs, "one step from this state differs")
    read = answer.get("state")
    if read is not None:
        left = after_diffs(run.spec, example.after, read, index)
        if left and not excused(run, example, [d.field for d in left], changed):
            raise Divergent(
                left, inputs, "one step from this state leaves another state (outputs agree)"
            )
    if not answered_alike(answer, index, count):
        raise Divergent([], inputs, unlike_twins(run, example))
    if eager is not None and index < len(eager["reward"]):
        eager_steps = Steps.of(eager, row)
        found = divergent_steps(run.spec, first, eager_steps, False, np.asarray([0]))
        if found:
            raise Divergent(found[0][1], inputs, "jit(step) differs from step")
