"""A JAX port compiles L2's programs while the driver draws L2's sequences: the batch
check's episodes, sent after the drawing, find their program compiled (the answer's own
`compile_s`, not a time)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from envport.serve.ops import Rollout
from envport.spec import load_spec
from envport.targets.reference import Reference
from envport.verifiers.draws.strategies import draws_for
from envport.verifiers.levels.l2.batch import batch_inputs
from envport.verifiers.levels.l2.warm import warm_l2

from helpers import CARTPOLE, JAX_PORT, NUMPY_PORT, started_worker

SEED = 3


@pytest.mark.parametrize("warmed", [True, False], ids=["warmed", "cold"])
def test_the_batch_checks_episodes_find_the_program_the_warm_up_compiled(warmed: bool) -> None:
    spec = load_spec(CARTPOLE)
    reference = Reference(spec)
    outside = draws_for(spec, reference).actions
    with started_worker(CARTPOLE, JAX_PORT, "jax") as worker:
        if warmed:
            assert warm_l2(spec, reference, worker, "jax", SEED, outside)
        # The batch check's inputs, drawn again as the check draws them after the machine:
        # the same for the seed, so the same shapes.
        inputs = batch_inputs(reference, SEED, max(spec.levels.l2.batch), outside)
        answer = worker.request(
            Rollout(states=inputs.stacked, actions=inputs.actions, noise=inputs.noise)
        )
    # The warm-up's answers are skipped; this request gets its own.
    assert answer["obs"].shape[:2] == inputs.actions.shape[:2]
    if warmed:
        assert answer["compile_s"] == 0.0
    else:
        assert answer["compile_s"] > 0.0


def test_no_l2_warm_up_where_nothing_compiles() -> None:
    spec = load_spec(CARTPOLE)
    reference = Reference(spec)
    with started_worker(CARTPOLE, NUMPY_PORT, "numpy") as worker:
        assert not warm_l2(spec, reference, worker, "numpy", SEED, None)


def _warmed_with_can_hold(tmp_path: Path, body: str) -> bool:
    """warm_l2 on a copy of the CartPole JAX port given `def can_hold(ref_state): body`."""
    port = tmp_path / "jax"
    shutil.copytree(JAX_PORT, port, ignore=shutil.ignore_patterns("__pycache__"))
    env = port / "env.py"
    env.write_text(env.read_text() + f"\n\ndef can_hold(ref_state):\n    {body}\n")
    spec = load_spec(CARTPOLE)
    with started_worker(CARTPOLE, port, "jax") as worker:
        return warm_l2(spec, Reference(spec), worker, "jax", SEED, None)


def test_no_l2_warm_up_for_a_port_that_tells_which_states_it_holds(tmp_path: Path) -> None:
    # The machine asks such a port about each state it loads while it draws: its first
    # question would wait behind the compiles, and the drawing with it.
    assert not _warmed_with_can_hold(tmp_path, "return True")


def test_a_can_hold_that_raises_is_left_to_the_machine_to_report(tmp_path: Path) -> None:
    assert not _warmed_with_can_hold(tmp_path, "raise ValueError('no')")
