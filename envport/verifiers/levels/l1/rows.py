"""Rows built on the reference (a state, an action, the reference's transition), put to the
port in batches and compared step by step: L1's `endings` and `reached` checks. A row
has `before` (a state), `action` and `transition` (the reference's answer). Every row's
state is one the reference reached in play, so the port must hold each (its `can_hold`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from envport.serve.ops import StepBatch
from envport.verifiers.levels.l1.examples import L1Run, l1_divergence
from envport.verifiers.reporting.compare import Steps, contract_problems, divergent_steps
from envport.verifiers.reporting.divergence import FieldDiff, LevelResult
from envport.verifiers.reporting.held import held_rows
from envport.verifiers.reporting.states import stack_states

# Rows put to the port per request: a batch's states (a chess position with its history is
# 100 kB) stay small whatever the rows' number.
CHUNK = 1024


def judge_rows(
    run: L1Run, entry: str, level: LevelResult, rows: list[Any], mode: str, told: str
) -> None:
    """All rows, in batches of CHUNK; the first that differs becomes the level's divergence,
    `told` saying where its start state and action came from. Every batch is compared, so
    the message counts every differing row."""
    first: tuple[Any, list] | None = None
    differing = 0
    if _refused(run, entry, level, rows, mode, told):
        return
    for start in range(0, len(rows), CHUNK):
        chunk = rows[start : start + CHUNK]
        problems, found = _compared(run, chunk)
        if problems:
            first, differing = (chunk[0], problems), 1
            break
        differing += len(found)
        if found and first is None:
            first = (chunk[found[0][0]], found[0][1])
    if first is None:
        return
    row, diffs = first
    level.passed = False
    level.diverged_episodes = differing
    contract = diffs[0].field in ("obs.dtype", "obs.shape")
    # Named by what differs (a legal-move mask is not the action played): the fields'
    # names without their indices.
    names = ", ".join(dict.fromkeys(d.field.split("[")[0] for d in diffs))
    message = (
        "observation dtype or shape break the contract"
        if contract
        else f"{told}: the port's step differs in {names} ({differing} of {len(rows)} rows differ)"
    )
    level.divergences.append(
        l1_divergence(run, mode, entry, row.before, row.action, diffs, message)
    )


def _refused(
    run: L1Run, entry: str, level: LevelResult, rows: list[Any], mode: str, told: str
) -> bool:
    """Whether the port refuses to hold a row's state (its `can_hold`): these states the
    reference reached in play, and a port must hold every one, so a refusal is a divergence
    (a drawn state's is a gap: reporting/held.py)."""
    refused: list[Any] = []
    for start in range(0, len(rows), CHUNK):
        chunk = rows[start : start + CHUNK]
        held = held_rows(run.worker, stack_states([row.before for row in chunk]))
        if held is None:
            return False
        refused += [row for row, kept in zip(chunk, held, strict=True) if not kept]
    if not refused:
        return False
    level.passed = False
    level.diverged_episodes = len(refused)
    message = (
        f"{told}: the port cannot hold its state (`can_hold` refused {len(refused)} of "
        f"{len(rows)} states the reference reached in play; a port must hold every one)"
    )
    level.divergences.append(
        l1_divergence(run, mode, entry, refused[0].before, refused[0].action, [], message)
    )
    return True


def _compared(run: L1Run, rows: list[Any]) -> tuple[list[FieldDiff], list]:
    """One batch: the contract's problems, and each differing row with its fields."""
    befores = [row.before for row in rows]
    transitions = [row.transition for row in rows]
    states = {k: np.stack([before[k] for before in befores]) for k in befores[0]}
    noises = [t.noise for t in transitions]
    noise = None if noises[0] is None else np.stack([np.asarray(n) for n in noises])
    answer = run.worker.request(
        StepBatch(states=states, actions=np.asarray([row.action for row in rows]), noise=noise)
    )
    expected = Steps.join([Steps.single(t) for t in transitions])
    actual = Steps.of(answer)
    problems = contract_problems(expected.obs, actual.obs)
    if problems:
        return problems, []
    return [], divergent_steps(run.spec, expected, actual, False, np.arange(len(rows)))
