"""The total cost cap of a batch: which run may start, and with what dollar cap.

Runs are separate processes, so the total is kept by the caps handed out: a run starts only
with a cap (its `--budget-usd`, enforced before every model call by its own Budget) that
fits in what the total has left after everything spent and every cap already handed to a
running run. Then the runs together can never pass the total, whatever they do.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

# Below a hundredth of a cent, dollars are rounding noise, not headroom.
EPSILON = 1e-6


@dataclass(frozen=True)
class Decision:
    action: Literal["start", "wait", "never"]
    budget_usd: float | None = None  # the run's whole cap, what it spent before included
    reason: str = ""


def decide(
    total_usd: float | None,
    budget_usd: float | None,
    own_spent: float,
    others_committed: float,
    others_running: int,
) -> Decision:
    """May this run start now?

    `others_committed`: what every other run has spent, with the cap of a running one in
    place of its spending (it may still spend up to its cap). A run that cannot start now
    waits while others run (their real cost may leave room); with none running, it never can.
    """
    if total_usd is None:
        return Decision("start", budget_usd)
    headroom = total_usd - others_committed - own_spent
    if budget_usd is not None:
        need = max(budget_usd - own_spent, 0.0)
        if need <= headroom + EPSILON:
            return Decision("start", budget_usd)
    else:
        # No cap of its own: it may spend what the total has left, and the next run waits.
        need = 0.0
        if headroom > EPSILON:
            return Decision("start", own_spent + headroom)
    if others_running:
        return Decision("wait", reason="waiting for running runs to leave room under total_usd")
    spent = others_committed + own_spent
    could = f", and a run may cost up to ${need:.4f}" if budget_usd is not None else ""
    return Decision(
        "never",
        reason=f"not started: the total cost cap ${total_usd:.4f} would be passed "
        f"(${spent:.4f} spent{could})",
    )


class Money(Protocol):
    """The batch's ledger: here (`Ledger`), or held by a Ray actor (`RemoteLedger`)."""

    def ask(self, run: str, budget_usd: float | None) -> Decision: ...
    def ended(self, run: str, spent: float) -> None: ...


class Ledger:
    """The batch's money in one place: what each run has spent (from its journal, the
    ledger of record) and the cap of each running run. `ask` decides a run's start with
    `decide` and, if it starts, records its cap before anyone else can ask, so runs started
    from anywhere (local processes, tasks on a cluster) share one total.

    Built afresh from the journals whenever a batch starts, so a batch whose driver was
    killed restarts with what was really spent, never with a stale count."""

    def __init__(self, total_usd: float | None, spent: dict[str, float]) -> None:
        self.total_usd = total_usd
        self.spent = dict(spent)
        self.caps: dict[str, float | None] = {}  # running runs: the cap each was handed

    def ask(self, run: str, budget_usd: float | None) -> Decision:
        others = sum(
            (self.caps[other] or 0.0) if other in self.caps else spent
            for other, spent in self.spent.items()
            if other != run
        )
        others += sum(cap or 0.0 for other, cap in self.caps.items() if other not in self.spent)
        running = sum(other != run for other in self.caps)
        decision = decide(self.total_usd, budget_usd, self.spent.get(run, 0.0), others, running)
        if decision.action == "start":
            self.caps[run] = decision.budget_usd
        return decision

    def ended(self, run: str, spent: float) -> None:
        """The run stopped: what it spent replaces its cap."""
        self.caps.pop(run, None)
        self.spent[run] = spent
