"""How L2's interaction machine meets the port: live, a request at a time, or recording
every sequence's requests to send them to the worker as one script and judge the answers
after (a round trip per step costs more than the step)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from envport.errors import PortRaised
from envport.serve.ops import Op, Requester, SessionScript
from envport.targets.reference import State
from envport.verifiers.draws.hypo import port_failures_abort
from envport.verifiers.reporting.states import Divergent


class Undecided(Exception):
    """A step the port answers differently where the reference itself cannot decide it at
    float32 resolution: not held against the port, but the two sides have parted."""


class Exchange:
    """How the machine meets the port. Live: each request is sent and its answer judged at
    once. Recording: the request and its judge are kept (the machine goes on as if the
    port had agreed), so that every sequence's requests go to the worker as one script and
    are judged after (`judged`)."""

    def __init__(self, worker: Requester) -> None:
        self.worker = worker
        self.recording = False
        self.kept: list[tuple[Op, Callable[[Any], None], list[str]]] = []

    def __call__(
        self, op: Op, judge: Callable[[Any], None], log: list[str], state: State | None = None
    ) -> None:
        """`state`: the reference's state the request starts from (a step's), shown when
        the port raises on it."""
        if self.recording:
            self.kept.append((op, judge, list(log)))
            return
        with port_failures_abort():
            try:
                answer = self.worker.request(op)
            except PortRaised as error:
                # A raise fails the sequence like an answer that differs: Hypothesis shrinks
                # it, and the machine's log is the way to the state the port raised on.
                raise Divergent.raised(error, state or {}) from None
        judge(answer)


def judged(exchange: Exchange, worker: Requester) -> tuple[Divergent | Undecided, list[str]] | None:
    """Send the kept requests as one script and judge each answer in order: the first
    failure (with the log of its sequence up to it), or None."""
    kept, exchange.kept = exchange.kept, []
    if not kept:
        return None
    # A port that dies or hangs on the script ends the verify; one that raises fails the
    # check, and the machine runs again live to find the sequence it raises on.
    try:
        answers = worker.request(SessionScript.of([op for op, _, _ in kept]))
    except PortRaised as error:
        return Divergent.raised(error, {}), []
    for (_, judge, log), answer in zip(kept, answers, strict=True):
        try:
            judge(answer)
        except (Divergent, Undecided) as failure:
            return failure, log
    return None
