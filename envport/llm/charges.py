"""Answers that arrived but were refused still count: the server may have billed them.

A provider refuses an answer whose body it cannot trust (MalformedResponse) and the retry
layer tries again. Each refused answer carries a Charge: its reported usage when that usage
is sound, else the request's worst case (estimated input and all of max_tokens at the
dearest input rate), so a server reporting negative or absurd usage cannot lower what the
ledger and the dollar cap see. Whoever accounts for calls (AccountedModel) listens with
`charging(hook)`; the retry layer calls the hook for every refused answer, and a hook that
raises (the budget cannot cover another attempt) ends the retries.

A context variable rather than a parameter: the Model protocol stays `complete(request)`,
and each asyncio task (one call) sees only its own listener.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from envport.llm.budget import estimate_input_tokens
from envport.llm.prices import Price
from envport.llm.types import ModelRequest, TokenUsage


@dataclass(frozen=True)
class Charge:
    """What one refused answer is counted at, and why it was refused."""

    usage: TokenUsage
    cost_usd: float
    reason: str

    @property
    def nothing(self) -> bool:
        return self.cost_usd == 0 and self.usage.total == 0


def reported(usage: TokenUsage, price: Price | None, reason: str) -> Charge:
    """A refused answer whose usage is sound: counted as reported."""
    return Charge(usage, price.cost(usage) if price is not None else 0.0, reason)


def worst_case(request: ModelRequest, price: Price | None, reason: str) -> Charge:
    """A refused answer whose usage cannot be trusted: counted as the most it could cost."""
    input_tokens = estimate_input_tokens(request)
    usage = TokenUsage(input_tokens=input_tokens, output_tokens=request.max_tokens)
    cost = price.worst_case(input_tokens, request.max_tokens) if price is not None else 0.0
    return Charge(usage, cost, reason)


#: Called with each refused answer's charge and whether another attempt follows.
ChargeHook = Callable[[Charge, bool], Awaitable[None]]

_HOOK: ContextVar[ChargeHook | None] = ContextVar("envport_charge_hook", default=None)


@contextmanager
def charging(hook: ChargeHook) -> Iterator[None]:
    token = _HOOK.set(hook)
    try:
        yield
    finally:
        _HOOK.reset(token)


async def charge(item: Charge, retrying: bool) -> None:
    hook = _HOOK.get()
    if hook is not None and not item.nothing:
        await hook(item, retrying)
