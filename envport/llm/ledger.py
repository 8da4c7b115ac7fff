"""Per-call records and run totals of tokens and dollars; the run store persists a Ledger."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Literal, Protocol

from pydantic import BaseModel, Field, computed_field

from envport.llm.types import Purpose, TokenUsage


def utc_now() -> datetime:
    return datetime.now(UTC)


class CallRecord(BaseModel):
    """One answered model call. Never holds prompts, headers or keys."""

    at: datetime = Field(default_factory=utc_now)
    purpose: Purpose
    model: str  # provider-qualified, as requested: "anthropic:claude-sonnet-4-5"
    served_by: str  # model id the server reported
    usage: TokenUsage
    cost_usd: float
    stop_reason: str
    cached: bool = False
    attempts: int = 1
    latency_s: float = 0.0
    request_key: str = ""


class CallTotals(BaseModel):
    """Tokens, dollars and calls summed over model calls: the one place they are summed
    (the ledger, the run's spending from its journal, review and report all use it).
    Tokens and dollars count paid calls only: an answer served from the cache cost nothing
    and used no tokens this time."""

    usage: TokenUsage = Field(default_factory=TokenUsage)
    cost_usd: float = 0.0
    paid_calls: int = 0
    cached_calls: int = 0

    def add(self, call: CallRecord) -> None:
        if call.cached:
            self.cached_calls += 1
            return
        self.paid_calls += 1
        self.cost_usd += call.cost_usd
        self.usage = self.usage + call.usage


def call_totals(calls: Iterable[CallRecord]) -> CallTotals:
    totals = CallTotals()
    for call in calls:
        totals.add(call)
    return totals


class CallJournal(Protocol):
    """Where the model layer reports its calls: the run's transcript (envport.runs.journal).
    A protocol, so the model layer does not depend on the run store that implements it."""

    def model_call(self, call: CallRecord) -> None: ...

    def call_failed(
        self,
        kind: Literal["model_error", "budget_exhausted"],
        purpose: Purpose,
        model: str,
        message: str,
    ) -> None: ...


class Ledger(BaseModel):
    """Every call of a run, with totals (see CallTotals)."""

    calls: list[CallRecord] = Field(default_factory=list)

    def record(self, call: CallRecord) -> None:
        self.calls.append(call)

    def totals(self) -> CallTotals:
        return call_totals(self.calls)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def usage(self) -> TokenUsage:
        return self.totals().usage

    @computed_field  # type: ignore[prop-decorator]
    @property
    def cost_usd(self) -> float:
        return self.totals().cost_usd

    @computed_field  # type: ignore[prop-decorator]
    @property
    def paid_calls(self) -> int:
        return self.totals().paid_calls

    @computed_field  # type: ignore[prop-decorator]
    @property
    def cached_calls(self) -> int:
        return self.totals().cached_calls
