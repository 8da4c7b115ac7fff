"""A JAX port compiles L1's step while the driver draws: the batch L1 sends after drawing
finds its programs compiled (the answer's own `compile_s`, not a time)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from envport.spec import load_spec
from envport.targets.reference import Reference
from envport.verifiers.levels.l1.examples import L1Run, reference_example, stepped_twice
from envport.verifiers.levels.l1.warm import warm_transition
from envport.verifiers.reporting.replay import replays
from envport.verifiers.verify import VerifyOptions

from helpers import CARTPOLE, JAX_PORT, NUMPY_PORT, started_worker


def _run(worker: object, backend: str) -> L1Run:
    spec = load_spec(CARTPOLE)
    replay = replays(str(CARTPOLE), str(JAX_PORT), VerifyOptions(), 20, 500, True)["l1"]
    return L1Run(spec, Reference(spec), worker, backend, 10, 0, replay)  # type: ignore[arg-type]


def _first_batch_compile_s(run: L1Run) -> float:
    """L1's first transition batch, as the check sends it: drawn states, read back."""
    drawn = [
        reference_example(run, {"physics": np.array([x, 0.0, 0.01, 0.0])}, int(x > 0))
        for x in (-0.02, 0.0, 0.03)
    ]
    batch = stepped_twice(
        [e.before for e in drawn], [e.action for e in drawn], [e.transition.noise for e in drawn]
    )
    answer = run.worker.request(dataclasses.replace(batch, read_state=True))
    return float(answer["compile_s"])


@pytest.mark.parametrize("warmed", [True, False], ids=["warmed", "cold"])
def test_l1s_first_batch_finds_the_step_the_warm_up_compiled(warmed: bool) -> None:
    with started_worker(CARTPOLE, JAX_PORT, "jax") as worker:
        run = _run(worker, "jax")
        if warmed:
            assert warm_transition(run)
            # The warm-up's answers are skipped; the next request gets its own.
            assert _first_batch_compile_s(run) == 0.0
        else:
            assert _first_batch_compile_s(run) > 0.0


def test_no_warm_up_where_nothing_compiles(tmp_path: Path) -> None:
    with started_worker(CARTPOLE, NUMPY_PORT, "numpy") as worker:
        assert not warm_transition(_run(worker, "numpy"))
