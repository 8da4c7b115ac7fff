"""The model the pipeline uses: cache, budget, ledger and journal around any Model."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from envport.llm.budget import Budget, BudgetExhausted, Reservation, WallTimeExhausted
from envport.llm.cache import ResponseCache, request_key
from envport.llm.charges import Charge, charging
from envport.llm.failures import one_line
from envport.llm.ledger import CallJournal, CallRecord, Ledger
from envport.llm.prices import PriceTable
from envport.llm.types import Model, ModelRequest, ModelResponse

#: stop_reason of a ledger record for an answer refused as malformed (counted, not used).
MALFORMED = "malformed"
NOTHING = Reservation(usd=0.0, tokens=0)


class AccountedModel:
    """Every call goes: cache (free) -> budget check (may refuse) -> model -> ledger, journal.

    `journal` (the run's transcript, envport.runs.journal.Journal) is told of every recorded
    call and of every call that brought no answer (a budget refusal, a model error).

    `prices` prices the worst case for the budget; it defaults to the inner model's table
    (providers carry one) and a model without one (replay) is treated as free. Answers the
    provider refused as malformed are recorded too (stop_reason "malformed", at the charge
    the provider set), and each further attempt reserves its own worst case. `time_left`
    (seconds, None for no limit) bounds each call: one still in flight when it runs out is
    cancelled with WallTimeExhausted.
    """

    def __init__(
        self,
        model: Model,
        *,
        cache_dir: Path | str | None = None,
        ledger: Ledger | None = None,
        budget: Budget | None = None,
        journal: CallJournal | None = None,
        prices: PriceTable | None = None,
        time_left: Callable[[], float | None] | None = None,
    ) -> None:
        self.model = model
        self.time_left = time_left
        self.name = model.name
        self.provider = model.provider
        self.model_id = model.model_id
        self.cache = ResponseCache(cache_dir) if cache_dir is not None else None
        self.ledger = ledger if ledger is not None else Ledger()
        self.budget = budget
        self.journal = journal
        self.prices = prices if prices is not None else getattr(model, "prices", None)
        if self.prices is not None and budget is not None and budget.budget_tokens is not None:
            # A token cap stops the run whatever a call costs: "no price" would be noise.
            self.prices.quiet_when_unpriced = True
        # Identical requests in flight at once wait for one another instead of both paying.
        # A lock lives only while some call uses it, so none outlives its event loop.
        self._key_locks: dict[str, asyncio.Lock] = {}
        self._key_users: dict[str, int] = {}

    async def complete(self, request: ModelRequest) -> ModelResponse:
        key = request_key(self.name, request)
        lock = self._key_locks.setdefault(key, asyncio.Lock())
        self._key_users[key] = self._key_users.get(key, 0) + 1
        try:
            async with lock:
                return await self._complete(key, request)
        finally:
            self._key_users[key] -= 1
            if self._key_users[key] == 0:
                del self._key_users[key], self._key_locks[key]

    async def _complete(self, key: str, request: ModelRequest) -> ModelResponse:
        if self.cache is not None:
            # Disk work goes to a thread: the run's event loop stays free for the call's own
            # network I/O and the lag monitor (a batch's runs are processes with a loop each).
            hit = await asyncio.to_thread(self.cache.get, key)
            if hit is not None:
                response = hit.model_copy(update={"cached": True, "cost_usd": 0.0, "attempts": 0})
                await self._record(key, request, response, latency_s=0.0)
                return response

        label = f"{request.purpose.label()} call"
        worst = None
        held: list[Reservation] = []  # the reservation of the attempt in flight, if any
        if self.budget is not None:
            price = self.prices.price_or_warn(self.model_id) if self.prices else None
            worst = self.budget.worst_case(request, price)
            try:
                held.append(self.budget.reserve(worst, label))
            except BudgetExhausted as exc:
                await asyncio.to_thread(self._failed, "budget_exhausted", str(exc), request)
                raise

        started = time.monotonic()

        async def refused(charge: Charge, retrying: bool) -> None:
            """An answer refused as malformed is spent; another attempt needs its own room."""
            if self.budget is not None:
                self.budget.settle(
                    held.pop() if held else NOTHING, charge.cost_usd, charge.usage.total
                )
            answer = ModelResponse(
                text="",
                stop_reason=MALFORMED,
                usage=charge.usage,
                model=self.model_id,
                cost_usd=charge.cost_usd,
            )
            await self._record(key, request, answer, latency_s=time.monotonic() - started)
            if retrying and self.budget is not None and worst is not None:
                held.append(
                    self.budget.reserve(worst, f"{label} (again, after a malformed answer)")
                )

        try:
            with charging(refused):
                response = await self._within_time(request, label)
        except BaseException as exc:
            if held and self.budget is not None:
                self.budget.release(held.pop())
            if isinstance(exc, Exception):
                # Only envport's own one-line messages reach the journal, scrubbed again.
                event: Literal["model_error", "budget_exhausted"] = (
                    "budget_exhausted" if isinstance(exc, BudgetExhausted) else "model_error"
                )
                await asyncio.to_thread(self._failed, event, one_line(str(exc)), request)
            raise
        latency = time.monotonic() - started

        if held and self.budget is not None:
            self.budget.settle(held.pop(), response.cost_usd, response.usage.total)
        if self.cache is not None:
            await asyncio.to_thread(self.cache.put, key, self.name, response)
        await self._record(key, request, response, latency_s=latency)
        return response

    async def _within_time(self, request: ModelRequest, label: str) -> ModelResponse:
        """The inner call, cancelled when the run's wall time is up. Only the call: an answer
        that arrived is always cached and recorded, so a resume never pays for it again."""
        left = self.time_left() if self.time_left is not None else None
        if left is None:
            return await self.model.complete(request)
        if left <= 0:
            raise WallTimeExhausted(label, in_flight=False)
        scope = asyncio.timeout(left)
        try:
            async with scope:
                return await self.model.complete(request)
        except TimeoutError:
            if scope.expired():
                raise WallTimeExhausted(label) from None
            raise

    async def _record(
        self, key: str, request: ModelRequest, response: ModelResponse, *, latency_s: float
    ) -> None:
        record = CallRecord(
            purpose=request.purpose,
            model=self.name,
            served_by=response.model,
            usage=response.usage,
            cost_usd=response.cost_usd,
            stop_reason=response.stop_reason,
            cached=response.cached,
            attempts=response.attempts,
            latency_s=round(latency_s, 3),
            request_key=key,
        )
        # The ledger first, before any await: a cancellation cannot leave a paid call out.
        self.ledger.record(record)
        if self.journal is not None:
            await asyncio.to_thread(self.journal.model_call, record)

    def _failed(
        self,
        kind: Literal["model_error", "budget_exhausted"],
        message: str,
        request: ModelRequest,
    ) -> None:
        if self.journal is not None:
            self.journal.call_failed(kind, request.purpose, self.name, message)
