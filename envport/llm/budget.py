"""Spending caps checked before each call against the call's worst case.

A call is refused when what has been spent, plus what calls in flight may still cost, plus
this call's worst case (estimated input and all of its max_tokens, at the dearest input rate)
could pass a cap. Refusing before the call is what lets a run stop cleanly under its cap
instead of noticing afterwards that it went over.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass

from envport.errors import EXIT_DIVERGED, EnvportError
from envport.llm.prices import Price
from envport.llm.types import ModelRequest

BUDGET_EXHAUSTED = "budget_exhausted"
# Code and prose run 3.5-4 characters per token; 3 errs on the side of stopping early.
CHARS_PER_TOKEN = 3
TOKENS_PER_MESSAGE = 8  # role markers and separators


class BudgetExhausted(EnvportError):
    """The next call could pass a cap; it was not made. The run should stop with `status`."""

    status = BUDGET_EXHAUSTED

    def __init__(self, message: str) -> None:
        # Exit 1: the run ended without a verified port, and nothing the user typed was wrong.
        super().__init__(message, exit_code=EXIT_DIVERGED)


class WallTimeExhausted(EnvportError):
    """The run's wall time ran out before or while a model call was made; a call in flight
    was cancelled (unanswered, so nothing was paid for that a resume would repeat)."""

    status = BUDGET_EXHAUSTED

    def __init__(self, label: str, *, in_flight: bool = True) -> None:
        # label: which call, e.g. "generate physics #0 call"
        what = "in flight was cancelled" if in_flight else "was not made"
        super().__init__(f"the {label} {what}", exit_code=EXIT_DIVERGED)
        self.label = label


def estimate_input_tokens(request: ModelRequest) -> int:
    chars = len(request.system) + len(request.stable_prefix)
    chars += sum(len(m.text) for m in request.messages)
    return math.ceil(chars / CHARS_PER_TOKEN) + TOKENS_PER_MESSAGE * (len(request.messages) + 1)


@dataclass(frozen=True)
class Reservation:
    usd: float
    tokens: int


class Budget:
    """Caps in dollars and/or tokens for one run (a batch's runs are separate processes,
    each with its own Budget under the cap the batch handed it: envport.batch.money).

    `spent_usd` and `spent_tokens` start a resumed run where the last one stopped. Safe to
    share across the run's tasks and threads: a check and its reservation happen under one
    lock.
    """

    def __init__(
        self,
        budget_usd: float | None = None,
        budget_tokens: int | None = None,
        *,
        spent_usd: float = 0.0,
        spent_tokens: int = 0,
    ) -> None:
        self.budget_usd = budget_usd
        self.budget_tokens = budget_tokens
        self.spent_usd = spent_usd
        self.spent_tokens = spent_tokens
        self.reserved_usd = 0.0
        self.reserved_tokens = 0
        self._lock = threading.Lock()

    def worst_case(self, request: ModelRequest, price: Price | None) -> Reservation:
        input_tokens = estimate_input_tokens(request)
        usd = price.worst_case(input_tokens, request.max_tokens) if price is not None else 0.0
        return Reservation(usd=usd, tokens=input_tokens + request.max_tokens)

    def reserve(self, worst: Reservation, label: str) -> Reservation:
        """Hold the worst case of a call about to be made, or raise BudgetExhausted."""
        with self._lock:
            committed_usd = self.spent_usd + self.reserved_usd
            if self.budget_usd is not None and committed_usd + worst.usd > self.budget_usd:
                raise BudgetExhausted(
                    f"budget exhausted: {label} could cost up to ${worst.usd:.4f} and "
                    f"${committed_usd:.4f} of the ${self.budget_usd:.2f} cap is spent or committed"
                )
            committed_tokens = self.spent_tokens + self.reserved_tokens
            if (
                self.budget_tokens is not None
                and committed_tokens + worst.tokens > self.budget_tokens
            ):
                raise BudgetExhausted(
                    f"budget exhausted: {label} could use up to {worst.tokens} tokens and "
                    f"{committed_tokens} of the {self.budget_tokens} token cap are spent or "
                    "committed"
                )
            self.reserved_usd += worst.usd
            self.reserved_tokens += worst.tokens
            return worst

    def settle(self, reservation: Reservation, cost_usd: float, tokens: int) -> None:
        """Replace a reservation by what the call really cost."""
        with self._lock:
            self._release(reservation)
            self.spent_usd += cost_usd
            self.spent_tokens += tokens

    def release(self, reservation: Reservation) -> None:
        """Drop a reservation of a call that failed (error answers are not billed)."""
        with self._lock:
            self._release(reservation)

    def _release(self, reservation: Reservation) -> None:
        self.reserved_usd = max(0.0, self.reserved_usd - reservation.usd)
        self.reserved_tokens = max(0, self.reserved_tokens - reservation.tokens)
