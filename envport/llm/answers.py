"""A completion body read as untrusted JSON: every field checked for its type and range.

The SDKs build their response objects without validation (a number stays a number where
text was promised), so providers read the raw JSON themselves with these helpers. What does
not fit raises MalformedResponse, which the retry layer retries. A refused answer that
reported sound usage is charged at that usage; one whose usage is itself wrong (negative,
not a whole number, more output than max_tokens allowed) is charged at the request's worst
case, so the ledger and the dollar cap never count less than the server may bill. Text
that passes is made printable (control characters escaped) before anything else sees it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from envport.llm.charges import reported, worst_case
from envport.llm.failures import MalformedResponse, printable
from envport.llm.prices import Price
from envport.llm.types import ModelRequest, TokenUsage

# No call uses a billion tokens; a count beyond is a lie, and pricing it would overflow.
MAX_REPORTED_TOKENS = 10**9


@dataclass(frozen=True)
class Answer:
    text: str
    raw_stop: str | None
    model: str | None


def kind(value: Any) -> str:
    """What a JSON value is, for an error line."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object" if isinstance(value, dict) else type(value).__name__


def body_object(content: bytes) -> dict[str, Any]:
    try:
        body = json.loads(content)
    except ValueError:  # not JSON, or not UTF-8
        raise MalformedResponse("the body is not JSON") from None
    if not isinstance(body, dict):
        raise MalformedResponse(f"the body is {kind(body)}, not an object")
    return body


def section(value: Any, where: str, *, optional: bool = True) -> dict[str, Any]:
    """A nested object; an absent optional one reads as empty."""
    if value is None and optional:
        return {}
    if not isinstance(value, dict):
        raise MalformedResponse(f"{where} is {kind(value)}, not an object")
    return value


def token_count(value: Any, where: str) -> int:
    """A reported token count: a whole number from 0 up (12.0 passes, 12.5, "12" and true do
    not); absent counts as 0, as servers leave out fields they do not use."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise MalformedResponse(f"{where} is {kind(value)}, not a token count")
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        raise MalformedResponse(f"{where} is {value!r}, not a whole number")
    if not 0 <= value <= MAX_REPORTED_TOKENS:
        shown = f"{value:.0f}" if abs(value) <= 10**15 else "beyond any real call"
        raise MalformedResponse(f"{where} is {shown}, out of range")
    return int(value)


def name(value: Any, where: str) -> str | None:
    """A short server-chosen string (model id, stop reason), escaped; absent is None."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise MalformedResponse(f"{where} is {kind(value)}, not a string")
    return printable(value)


def text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise MalformedResponse(f"{where} is {kind(value)}, not text")
    return printable(value, multiline=True)


def within_request(usage: TokenUsage, request: ModelRequest) -> TokenUsage:
    if usage.output_tokens > request.max_tokens:
        raise MalformedResponse(
            f"usage reports {usage.output_tokens} output tokens, more than the "
            f"{request.max_tokens} the request allowed"
        )
    return usage


def read_completion(
    body: dict[str, Any],
    request: ModelRequest,
    price: Price | None,
    usage_of: Callable[[dict[str, Any]], TokenUsage],
    answer_of: Callable[[dict[str, Any]], Answer],
) -> tuple[TokenUsage, Answer]:
    """Usage first, so a refused answer knows what to be charged at."""
    try:
        usage = within_request(usage_of(body), request)
    except MalformedResponse as exc:
        raise MalformedResponse(exc.reason, worst_case(request, price, exc.reason)) from None
    try:
        answer = answer_of(body)
    except MalformedResponse as exc:
        raise MalformedResponse(exc.reason, reported(usage, price, exc.reason)) from None
    return usage, answer
