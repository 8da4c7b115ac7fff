"""L2's harness-driven checks in order: the state machine, batches against singles, sizes.

One draw of the reference's constants and edges serves all three; l2.sizes does not run for
a JAX port (a one-env function the harness vmaps, no chunks of its own).
"""

from __future__ import annotations

from collections.abc import Sequence

from envport.serve.ops import Requester
from envport.spec import PortSpec
from envport.targets.reference import Reference
from envport.targets.registry import TargetName
from envport.verifiers.draws.strategies import draws_for
from envport.verifiers.levels.l2.batch import check_batch
from envport.verifiers.levels.l2.interaction import check_interaction
from envport.verifiers.levels.l2.sizes import check_sizes
from envport.verifiers.levels.l2.warm import warm_l2
from envport.verifiers.reporting.divergence import LevelResult


def run_l2(
    spec: PortSpec,
    reference: Reference,
    worker: Requester,
    backend: str | None,
    examples: int,
    seed: int,
    replay: str,
    shrink: bool = True,
    bench_sizes: Sequence[int] = (),
) -> list[LevelResult]:
    draws = draws_for(spec, reference)
    holds_all = warm_l2(spec, reference, worker, backend, seed, draws.actions)
    return [
        check_interaction(
            spec, reference, worker, backend or "", examples, replay, shrink, draws, holds_all
        ),
        check_batch(spec, reference, worker, seed, replay, draws.actions, backend),
        *(
            []
            if backend == TargetName.JAX
            else [check_sizes(spec, reference, worker, seed, replay, draws.actions, bench_sizes)]
        ),
    ]
