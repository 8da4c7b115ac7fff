"""L2 batch check: B envs stepped as one batch must equal the same B envs stepped alone.

B takes each of the spec's sizes (`levels.l2.batch`, default 1, 7 and 33): odd on purpose,
so a port that works in chunks of 4, 8 or 256 envs meets a partial last chunk, and a batch
of one meets the smallest. A JAX port is vmapped by the harness and has no chunks: it gets
the largest size only. Each env plays a sticky policy (with the spec's share of
out-of-range actions) from its own reference reset state.
"""

from __future__ import annotations

import time

import numpy as np

from envport.serve.ops import BatchVsSingle, Requester
from envport.spec import PortSpec
from envport.targets.randomness import play_noise
from envport.targets.reference import Reference
from envport.targets.registry import TargetName
from envport.verifiers.action_range import ActionRange
from envport.verifiers.compare import Steps, divergent_steps
from envport.verifiers.divergence import Divergence, LevelResult
from envport.verifiers.policies import Planner

BATCH_STEPS = 20


def _check_size(
    spec: PortSpec,
    reference: Reference,
    worker: Requester,
    seed: int,
    replay: str,
    size: int,
    planner: Planner,
    level: LevelResult,
) -> None:
    seeds = [seed * 1000 + index for index in range(size)]
    states = []
    for reset_seed in seeds:
        reference.reset(reset_seed)
        states.append(reference.read_state())
    stacked = {k: np.stack([s[k] for s in states]) for k in states[0]}
    space = reference.action_space
    actions = np.stack(
        [np.asarray(list(planner.actions("sticky", space, i, BATCH_STEPS))) for i in range(size)]
    )
    # A stochastic env's B envs all get noise recorded from the reference, batched or alone.
    noise = play_noise(reference, seeds, actions)
    answer = worker.request(BatchVsSingle(states=stacked, actions=actions, noise=noise))
    level.episodes += size
    for row in range(size):
        single = {k: v[row] for k, v in answer["single"].items()}
        batched = {k: v[row] for k, v in answer["batch"].items()}
        ended = np.flatnonzero(np.asarray(single["terminated"]) | np.asarray(single["truncated"]))
        length = int(ended[0]) + 1 if ended.size else BATCH_STEPS
        expected = Steps.of(single, slice(0, length))
        actual = Steps.of(batched, slice(0, length))
        level.steps_compared += length
        found = divergent_steps(spec, expected, actual, False, np.asarray([0]))
        if not found:
            continue
        level.passed = False
        level.diverged_episodes += 1
        step, diffs = found[0]
        level.divergences.append(
            Divergence(
                level="l2",
                mode="batch",
                episode=row,
                step=step,
                seed=seed,
                start_state={k: np.asarray(v).tolist() for k, v in states[row].items()},
                action_prefix=actions[row, : step + 1].tolist(),
                fields=diffs,
                message=f"env {row} of a batch of {size} differs from the same env alone",
                replay=replay,
            )
        )


def check_batch(
    spec: PortSpec,
    reference: Reference,
    worker: Requester,
    seed: int,
    replay: str,
    outside: ActionRange | None = None,
    backend: str | None = None,
) -> LevelResult:
    started = time.perf_counter()
    level = LevelResult(level="l2", mode="batch", passed=True)
    planner = Planner(seed, outside=outside)
    sizes = spec.levels.l2.batch
    if backend == TargetName.JAX:
        # A JAX port is a one-env function the harness vmaps: it has no chunks of its own,
        # and each size would only cost a compilation. The largest is checked.
        sizes = [max(sizes)]
    for size in sizes:
        _check_size(spec, reference, worker, seed, replay, size, planner, level)
    level.seconds = {"total": time.perf_counter() - started}
    return level
