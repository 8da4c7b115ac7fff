"""L1 landings: one step from start states solved to land next to the reference's constants.

For each float state component, each constant of the reference's source within a step's
reach of it (draws/constants.py) and each side (2e-6 past it, relative, either way),
`levels.l1.landings` start states are built on the reference (landing.py): the other
components and the action are drawn at random, a few times if need be, until sweeping the
solved component crosses the constant and the constant decides something there (the
reference's outputs differ from those of a start landing on its other side). The port
takes each row as L1's transition check takes its examples, and it is compared the same
way, except for an output the reference itself cannot decide at float32 resolution from
that start. Unlike Hypothesis's draws, every (component, constant, side) gets its rows, so
a threshold rounded in its fifth digit is met every run. Deterministic in --seed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces

from envport.targets.randomness import example_seed
from envport.targets.reference import State, Transition
from envport.verifiers.draws.action_range import ActionRange
from envport.verifiers.draws.landing import (
    Landed,
    Landing,
    land,
    landing_choices,
    random_state,
    unresolved,
)
from envport.verifiers.draws.strategies import Draws
from envport.verifiers.levels.l1.examples import (
    L1Run,
    answered_alike,
    rows_check,
    stepped_twice,
)
from envport.verifiers.reporting.compare import Steps, contract_problems, divergent_steps
from envport.verifiers.reporting.divergence import Divergence, FieldDiff, LevelResult
from envport.verifiers.reporting.held import Unheld, held_rows
from envport.verifiers.reporting.states import stack_states

# Draws of the other components and the action tried per row, for one where the constant
# decides something.
ATTEMPTS = 6
# Apart from the hypothesis stream and L3's: these rows are their own draws.
_SALT = 0x1A7D


@dataclass
class Row:
    landing: Landing
    before: State
    action: Any
    transition: Transition


def _action(space: spaces.Space, outside: ActionRange, rng: np.random.Generator) -> Any:
    """An action from the space, or (at the spec's share) one outside it."""
    beyond = outside.active and rng.random() < outside.share
    if isinstance(space, spaces.Discrete):
        if beyond and outside.invalid:
            return int(rng.choice(outside.invalid))
        return int(space.start) + int(rng.integers(0, int(space.n)))
    if isinstance(space, spaces.MultiDiscrete):  # a joint action: each agent's in range
        return (rng.random(np.shape(space.nvec)) * space.nvec).astype(space.dtype)
    if not isinstance(space, spaces.Box):
        raise TypeError(f"L1 cannot draw actions from {space}")
    low = np.where(np.isfinite(space.low), space.low, -1.0)
    high = np.where(np.isfinite(space.high), space.high, 1.0)
    if beyond and outside.low is not None and outside.high is not None:
        low, high = outside.low, outside.high
    return rng.uniform(low, high).astype(space.dtype)


def applies(run: L1Run) -> bool:
    """Landings need float state components with constants in reach (Taxi has none)."""
    draws = run.draws or Draws()
    return run.spec.levels.l1.landings > 0 and bool(landing_choices(run.spec, draws.constants))


def _outputs(run: L1Run, state: State, action: Any) -> Steps:
    run.reference.reset(run.seed)
    run.reference.write_state({**run.reference.read_state(), **state})
    before = run.reference.read_state()
    run.reference.reseed_draws(example_seed(before, action))
    return Steps.single(run.reference.step(action))


def _decides(run: L1Run, landed: Landed, action: Any) -> bool:
    """Whether the constant decides anything for this start: the reference's outputs
    differ, beyond tolerance, between the landing and its mirror on the other side.
    (MountainCar's goal at 0.5 decides nothing for a car moving left.)"""
    if landed.mirror is None:
        return False
    here, there = _outputs(run, landed.state, action), _outputs(run, landed.mirror, action)
    return bool(divergent_steps(run.spec, here, there, False, np.asarray([0])))


def build_rows(run: L1Run) -> list[Row]:
    """For each landing choice, `landings` rows: each the first of a few random draws of the
    other components and the action for which the constant decides something, else the last
    draw that landed at all."""
    spec, reference = run.spec, run.reference
    draws = run.draws or Draws()
    rng = np.random.default_rng([run.seed, _SALT])
    rows = []
    for landing in landing_choices(spec, draws.constants):
        for _ in range(spec.levels.l1.landings):
            chosen = None
            for _ in range(ATTEMPTS):
                action = _action(reference.action_space, draws.actions, rng)
                landed = land(spec, reference, random_state(spec, rng), action, landing, run.seed)
                if landed is None:
                    continue
                chosen = (landed.state, action)
                if _decides(run, landed, action):
                    break
            if chosen is not None:
                reference.reset(run.seed)
                reference.write_state({**reference.read_state(), **chosen[0]})
                before = reference.read_state()
                reference.reseed_draws(example_seed(before, chosen[1]))
                rows.append(Row(landing, before, chosen[1], reference.step(chosen[1])))
    return rows


def _excused(run: L1Run, row: Row, fields: list[str]) -> bool:
    if run.spec.randomness is not None:
        return False
    expected = Steps.single(row.transition)

    def changed(moved: State, transition: Transition, after: State) -> set[str]:
        again = divergent_steps(
            run.spec, expected, Steps.single(transition), False, np.asarray([0])
        )
        return {d.field for _, diffs in again for d in diffs}

    seed = example_seed(row.before, row.action)
    return set(fields) <= unresolved(run.reference, row.before, row.action, run.seed, seed, changed)


def _fail(
    run: L1Run, entry: str, level: LevelResult, row: Row, diffs: list[FieldDiff], message: str
) -> None:
    level.passed = False
    level.diverged_episodes += 1
    if level.divergences:
        return  # the first tells the story; the count tells the extent
    level.divergences.append(
        Divergence(
            level="l1",
            mode="landings",
            module=entry,
            seed=run.seed,
            start_state={k: np.asarray(v).tolist() for k, v in row.before.items()},
            action_prefix=[np.asarray(row.action).tolist()],
            fields=diffs,
            message=message,
            replay=run.replay.at(module=entry).command(),
            replay_of=run.replay.at(module=entry),
        )
    )


def check_landings(run: L1Run, entry: str) -> LevelResult:
    return rows_check(
        run,
        entry,
        "landings",
        lambda: build_rows(run),
        lambda level, rows: _judge(run, entry, level, rows),
    )


def _judge(run: L1Run, entry: str, level: LevelResult, rows: list[Row]) -> None:
    """Every row in one request, each state twice (the two answers must agree), as L1's
    transition check sends its examples. Solved start states the port cannot hold are
    counted, not stepped (reporting/held.py)."""
    held = held_rows(run.worker, stack_states([r.before for r in rows])) if rows else None
    if len(rows) == level.episodes:  # the whole check, not a prefix narrowing a raise
        unheld = Unheld("l1.landings", run.spec.levels.unheld_ceiling)
        unheld.count(held, len(rows))
        level.steps_compared -= unheld.refused
        unheld.report(level)
    if held is not None:
        rows = [row for row, kept in zip(rows, held, strict=True) if kept]
    if not rows:
        return
    answer = run.worker.request(
        stepped_twice(
            [r.before for r in rows], [r.action for r in rows], [r.transition.noise for r in rows]
        )
    )
    for index, row in enumerate(rows):
        expected, actual = Steps.single(row.transition), Steps.of(answer, slice(index, index + 1))
        problems = contract_problems(expected.obs, actual.obs)
        if problems:
            _fail(run, entry, level, row, problems, "observation dtype or shape break the contract")
            return
        found = divergent_steps(run.spec, expected, actual, False, np.asarray([0]))
        if found and not _excused(run, row, [d.field for d in found[0][1]]):
            where = row.landing.describe()
            _fail(
                run, entry, level, row, found[0][1], f"one step from a start solved so that {where}"
            )
        if not answered_alike(answer, index, len(rows)):
            _fail(run, entry, level, row, [], "the same step twice gave different answers")
