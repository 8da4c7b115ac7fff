"""A JAX port's L2 programs, compiled while the driver draws L2's sequences.

L2's interaction machine draws and records every sequence in the driver (Hypothesis, the
reference) before the worker sees one request, and the batch check comes after it; so the
worker sat idle through the drawing, then compiled the session's load, step and read
(pgx's Seaquest: about 6 s) and the batch check's rollout and single episodes (6 s more)
with the driver idle. Sent ahead, without waiting, the worker compiles them while the
driver draws: the batch check's own request (the same inputs, deterministic for the
seed, so the same shapes) and one session load and step from the reference's start.

Only for a port that holds every state (no `can_hold`): the machine asks a port that has
one about each state it loads while it draws, and that first question would wait behind
the compiles, the drawing with it. Whether it has one is asked first, and the machine is
told, so it does not ask again.

The answers are dropped (the worker's client skips replies to requests it no longer waits
for) and change nothing: each check sends its own requests after, and a port that raises
here raises there too, reported there.
"""

from __future__ import annotations

import copy

import numpy as np

from envport.errors import PortError
from envport.serve.client import PortWorker
from envport.serve.ops import Requester, SessionLoad, SessionStep
from envport.spec import PortSpec
from envport.targets.reference import Reference
from envport.targets.registry import TargetName
from envport.verifiers.draws.action_range import ActionRange
from envport.verifiers.levels.l2.batch import batch_inputs
from envport.verifiers.reporting.held import held_rows


def warm_l2(
    spec: PortSpec,
    reference: Reference,
    worker: Requester,
    backend: str | None,
    seed: int,
    outside: ActionRange | None,
) -> bool:
    """Send the batch check's request and a session load and step, without waiting: True
    when sent, and then the port holds every state (it has no `can_hold`). False when not
    worth it or not possible (not JAX, no local worker, a port with `can_hold`, a
    reference that refuses the inputs)."""
    if backend != TargetName.JAX or not isinstance(worker, PortWorker):
        return False
    reference.reset(seed)
    start = reference.read_state()
    try:
        if held_rows(worker, {k: np.asarray(v)[None] for k, v in start.items()}) is not None:
            return False
    except PortError:  # a `can_hold` that raises: the machine meets it and reports it
        return False
    try:
        batch = batch_inputs(reference, seed, max(spec.levels.l2.batch), outside)
        space = copy.deepcopy(reference.action_space)
        space.seed(seed)
        action = space.sample()
        reference.reset(seed)
        out = reference.step(action)
    except Exception:  # the reference's own refusal: nothing to warm
        return False
    worker.send(batch.request)
    worker.send(SessionLoad(states={k: np.asarray(v)[None] for k, v in start.items()}))
    noise = None if out.noise is None else out.noise[None]
    worker.send(SessionStep(actions=np.asarray([action]), noise=noise))
    return True
