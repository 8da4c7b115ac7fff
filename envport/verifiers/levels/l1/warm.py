"""A JAX port's first compiles, started before L1 draws its states.

L1 draws every example first (Hypothesis, in the driver) and only then sends the port one
batch, so the worker sat idle through the drawing and the driver through the compiles that
followed: pgx's Seaquest drew for about 20 s and then compiled its step, read back and
eager, for about 15 s more. One example stepped from the reference's start, sent without
waiting for its answers, has the worker compile the same programs while the driver draws.

The answers are dropped (the worker's client skips replies to requests it no longer waits
for) and change nothing: a port that raises here raises on L1's own batch, reported there.
"""

from __future__ import annotations

import copy
from typing import Any

from envport.serve import ops
from envport.serve.client import PortWorker
from envport.targets.randomness import example_seed
from envport.targets.registry import TargetName
from envport.verifiers.levels.l1.examples import L1Run, stepped_twice


def warm_transition(run: L1Run) -> bool:
    """Send the worker L1's transition batch and eager row for one reference step, without
    waiting. False when not worth it or not possible (not JAX, no local worker, a
    reference that will not take the step)."""
    if run.backend != TargetName.JAX or not isinstance(run.worker, PortWorker):
        return False
    try:
        before, action, noise = _one_step(run)
    except Exception:  # the reference's own refusal of a sampled action: nothing to warm
        return False
    batch = stepped_twice([before], [action], [noise])
    run.worker.send(
        ops.StepBatch(
            states=batch.states, actions=batch.actions, noise=batch.noise, read_state=True
        )
    )
    one = slice(0, 1)
    run.worker.send(
        ops.StepBatch(
            states={k: v[one] for k, v in batch.states.items()},
            actions=batch.actions[one],
            eager=True,
            noise=None if batch.noise is None else batch.noise[one],
        )
    )
    return True


def _one_step(run: L1Run) -> tuple[dict[str, Any], Any, Any]:
    """The reference's start state, an action sampled from its space (seeded, on a copy),
    and the noise of that step, shaped as L1's examples are."""
    space = copy.deepcopy(run.reference.action_space)
    space.seed(run.seed)
    action = space.sample()
    run.reference.reset(run.seed)
    before = run.reference.read_state()
    run.reference.reseed_draws(example_seed(before, action))
    transition = run.reference.step(action)
    return before, action, transition.noise
