"""l2.sizes: one step of large batches: past each power of two, at each, and a prime.

A port that works in chunks (a Rust port's threads, a NumPy port's blocks) can lose the tail
of a batch whose size passes a boundary the small batches of the other checks never reach:
a chunk count that floors away the rest of 512 envs, a last env skipped past 256. And a
port can go wrong only at the sizes people use: a path taken only for a power of two of
1024 or more envs. Here each size in SIZES (2^k + 1 and 2^k for k = 6..12, 8192, 1031, a
prime) and every size the caller will time (`extra`: the sizes `translate --optimize`
benches) steps once, the envs cycling through the DISTINCT reference steps of
`tiled.DistinctSteps`, which decide every env's outcome whatever the size. The divergence
names the env and the size; the replay line reruns the same batches (they depend on the
seed alone). A JAX port is a one-env function the harness vmaps, with no chunks of its own,
and each size would cost a compilation: not run.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from envport.errors import PortRaised
from envport.serve.ops import Requester
from envport.spec import PortSpec
from envport.targets.reference import Reference
from envport.verifiers.draws.action_range import ActionRange
from envport.verifiers.levels.l2.tiled import DistinctSteps, SizeOutcome
from envport.verifiers.reporting.divergence import Divergence, LevelResult
from envport.verifiers.reporting.states import port_words

PAST_POWERS = (65, 129, 257, 513, 1025, 2049, 4097)
POWERS = (64, 128, 256, 512, 1024, 2048, 4096, 8192)
SIZES = tuple(sorted((*PAST_POWERS, *POWERS, 1031)))


def sizes_with(extra: Sequence[int] = ()) -> list[int]:
    """SIZES and the sizes a caller will time, each once, ascending."""
    return sorted({*SIZES, *extra})


def check_sizes(
    spec: PortSpec,
    reference: Reference,
    worker: Requester,
    seed: int,
    replay: str,
    outside: ActionRange | None = None,
    extra: Sequence[int] = (),
) -> LevelResult:
    started = time.perf_counter()
    sizes = sizes_with(extra)
    level = LevelResult(level="l2", mode="sizes", passed=True, episodes=len(sizes))
    distinct = DistinctSteps.played(reference, seed, outside)
    sampled, tried = [], []
    for size in sizes:
        tried.append(size)
        try:
            outcome = distinct.step(spec, worker, size)
        except PortRaised as error:
            # Every env of the batch is one of the distinct states: no one row to name.
            level.passed, level.diverged_episodes = False, level.diverged_episodes + 1
            level.divergences.append(
                Divergence(
                    level="l2", mode="sizes", seed=seed, message=port_words(error), replay=replay
                )
            )
            break
        level.steps_compared += outcome.compared
        if outcome.compared < size:
            sampled.append(size)
        if not outcome.passed:
            _diverged(level, distinct, outcome, (seed, replay))
    level.note = (
        f"batches of {', '.join(map(str, tried))}: one step each, "
        f"{level.steps_compared} envs compared"
        + (f" (a sample of the envs of {', '.join(map(str, sampled))})" if sampled else "")
    )
    level.seconds = {"total": time.perf_counter() - started}
    return level


def _diverged(
    level: LevelResult, distinct: DistinctSteps, outcome: SizeOutcome, rerun: tuple[int, str]
) -> None:
    env, diffs = outcome.differing[0]
    state, action = distinct.start(env)
    level.passed = False
    level.diverged_episodes += 1
    level.divergences.append(
        Divergence(
            level="l2",
            mode="sizes",
            step=0,
            start_state={
                "batch": outcome.size,
                "row": env,
                **{k: np.asarray(v).tolist() for k, v in state.items()},
            },
            action_prefix=[np.asarray(action).tolist()],
            fields=diffs,
            message=outcome.where(),
            seed=rerun[0],
            replay=rerun[1],
        )
    )
