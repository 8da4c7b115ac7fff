"""l2.sizes: one step of large batches, each one env past a power of two, and a prime.

A port that works in chunks (a Rust port's threads, a NumPy port's blocks) can lose the tail
of a batch whose size passes a boundary the small batches of the other checks never reach:
a chunk count that floors away the rest of 512 envs, a last env skipped past 256. Here each
size in SIZES (2^k + 1 for k = 6..12, and 1031, a prime) steps once, every row the step of
one of DISTINCT reference reset states with its own action, the rows cycling through them:
DISTINCT reference steps decide every row's outcome, whatever the size. Every row is
compared, so the divergence names the row and the size; the replay line reruns the same
batches (they depend on the seed alone). A JAX port is a one-env function the harness
vmaps, with no chunks of its own, and each size would cost a compilation: not run.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from envport.serve.ops import Requester, StepBatch
from envport.spec import PortSpec
from envport.targets.reference import Reference
from envport.verifiers.draws.action_range import ActionRange
from envport.verifiers.draws.policies import Planner
from envport.verifiers.reporting.compare import Steps, divergent_steps
from envport.verifiers.reporting.divergence import Divergence, LevelResult

SIZES = (65, 129, 257, 513, 1025, 1031, 2049, 4097)
# Prime, so the state a row holds falls differently against any chunk size.
DISTINCT = 61
SEED_OFFSET = 8_130_000


def check_sizes(
    spec: PortSpec,
    reference: Reference,
    worker: Requester,
    seed: int,
    replay: str,
    outside: ActionRange | None = None,
) -> LevelResult:
    started = time.perf_counter()
    level = LevelResult(level="l2", mode="sizes", passed=True, episodes=len(SIZES))
    states, actions, transitions = _distinct_steps(reference, seed, outside)
    for size in SIZES:
        rows = np.arange(size) % DISTINCT
        stacked = {key: np.stack([states[r][key] for r in rows]) for key in states[0]}
        noise = None
        if transitions[0].noise is not None:
            noise = np.stack([np.asarray(transitions[r].noise) for r in rows])
        answer = worker.request(
            StepBatch(states=stacked, actions=np.stack([actions[r] for r in rows]), noise=noise)
        )
        expected = Steps.join([Steps.single(transitions[r]) for r in rows])
        actual = Steps.of(answer)
        level.steps_compared += size
        if len(actual.reward) != size:
            problem = f"a batch of {size} answered {len(actual.reward)} rows"
            _diverged(level, (seed, replay), size, 0, [], problem)
            continue
        found = divergent_steps(spec, expected, actual, False, np.arange(size))
        if found:
            row, diffs = found[0]
            message = (
                f"row {row} of a batch of {size} differs from the reference's step "
                f"({len(found)} of {size} rows differ; the first at row {found[0][0]}, the "
                f"last at row {found[-1][0]})"
            )
            picked = rows[row]
            _diverged(
                level, (seed, replay), size, row, diffs, message, states[picked], actions[picked]
            )
    level.note = (
        f"batches of {', '.join(map(str, SIZES))}: one step each, "
        f"{level.steps_compared} rows compared"
    )
    level.seconds = {"total": time.perf_counter() - started}
    return level


def _distinct_steps(
    reference: Reference, seed: int, outside: ActionRange | None
) -> tuple[list[dict[str, np.ndarray]], list[np.ndarray], list[Any]]:
    planner = Planner(seed, outside=outside)
    space = reference.action_space
    states, actions, transitions = [], [], []
    for index in range(DISTINCT):
        reference.reset(seed * 100_003 + SEED_OFFSET + index)
        states.append(reference.read_state())
        action = np.asarray(next(iter(planner.actions("uniform", space, index, 1))))
        actions.append(action)
        transitions.append(reference.step(action.item() if action.ndim == 0 else action))
    return states, actions, transitions


def _diverged(
    level: LevelResult,
    rerun: tuple[int, str],
    size: int,
    row: int,
    diffs: list,
    message: str,
    state: dict[str, np.ndarray] | None = None,
    action: np.ndarray | None = None,
) -> None:
    level.passed = False
    level.diverged_episodes += 1
    level.divergences.append(
        Divergence(
            level="l2",
            mode="sizes",
            step=0,
            start_state={
                "batch": size,
                "row": row,
                **{k: np.asarray(v).tolist() for k, v in (state or {}).items()},
            },
            action_prefix=[] if action is None else [np.asarray(action).tolist()],
            fields=diffs,
            message=message,
            seed=rerun[0],
            replay=rerun[1],
        )
    )
