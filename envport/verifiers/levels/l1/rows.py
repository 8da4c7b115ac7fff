"""Rows built on the reference (a state, an action, the reference's transition), put to the
port in one batch and compared step by step: L1's `endings` and `reached` checks."""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from envport.serve.ops import StepBatch
from envport.targets.reference import State, Transition
from envport.verifiers.levels.l1.properties import L1Run
from envport.verifiers.reporting.compare import Steps, contract_problems, divergent_steps
from envport.verifiers.reporting.divergence import Divergence, LevelResult


class Row(Protocol):
    @property
    def before(self) -> State: ...

    @property
    def action(self) -> Any: ...

    @property
    def transition(self) -> Transition: ...


def judge_rows(
    run: L1Run, entry: str, level: LevelResult, rows: list[Any], mode: str, told: str
) -> None:
    """All rows as one batch; the first that differs becomes the level's divergence, `told`
    saying where its start state and action came from."""
    states = {k: np.stack([row.before[k] for row in rows]) for k in rows[0].before}
    noises = [row.transition.noise for row in rows]
    noise = None if noises[0] is None else np.stack([np.asarray(n) for n in noises])
    answer = run.worker.request(
        StepBatch(states=states, actions=np.asarray([row.action for row in rows]), noise=noise)
    )
    expected = Steps.join([Steps.single(row.transition) for row in rows])
    actual = Steps.of(answer)
    problems = contract_problems(expected.obs, actual.obs)
    found = divergent_steps(run.spec, expected, actual, False, np.arange(len(rows)))
    if not problems and not found:
        return
    level.passed = False
    level.diverged_episodes = 1 if problems else len(found)
    index, diffs = (0, problems) if problems else found[0]
    row = rows[index]
    level.divergences.append(
        Divergence(
            level="l1",
            mode=mode,
            module=entry,
            seed=run.seed,
            start_state={k: np.asarray(v).tolist() for k, v in row.before.items()},
            action_prefix=[np.asarray(row.action).tolist()],
            fields=diffs,
            message=(
                "observation dtype or shape break the contract"
                if problems
                else f"{told} differs ({level.diverged_episodes} of {len(rows)} rows differ)"
            ),
            replay=run.replay.at(module=entry).command(),
            replay_of=run.replay.at(module=entry),
        )
    )
