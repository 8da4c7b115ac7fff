"""Per-call records and run totals of tokens and dollars; the run store persists a Ledger."""

from __future__ import annotations

from datetime import UTC, datetime

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


class Ledger(BaseModel):
    """Every call of a run, with totals. Totals count paid calls only: an answer served from
    the cache cost nothing and used no tokens this time."""

    calls: list[CallRecord] = Field(default_factory=list)

    def record(self, call: CallRecord) -> None:
        self.calls.append(call)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def usage(self) -> TokenUsage:
        total = TokenUsage()
        for call in self.calls:
            if not call.cached:
                total = total + call.usage
        return total

    @computed_field  # type: ignore[prop-decorator]
    @property
    def cost_usd(self) -> float:
        return sum(call.cost_usd for call in self.calls)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def paid_calls(self) -> int:
        return sum(1 for call in self.calls if not call.cached)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def cached_calls(self) -> int:
        return sum(1 for call in self.calls if call.cached)
