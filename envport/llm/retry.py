"""One retry layer around every SDK call (the SDKs' own retries are switched off).

Each attempt has a total deadline (`CallContext.timeout`): the SDKs' timeout restarts with
every byte read, so a server trickling a byte every few seconds would hold a call forever;
the attempt is cancelled when its deadline passes, whatever the server does.

Transient failures (429, 408, 409, 5xx, connection errors, timeouts, malformed bodies) are
retried with exponential backoff and jitter, waiting what retry-after asks when the server
says; refusals (400, 401, 403, 404, ...) fail at once. Either way the caller gets one
ModelCallError line naming the status and the attempts, with secrets scrubbed and control
characters escaped.
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import json
import logging
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt
from tenacity.wait import wait_exponential_jitter

from envport.llm import charges
from envport.llm.failures import DeadlineExceeded, MalformedResponse, ModelCallError, one_line

if TYPE_CHECKING:  # the SDKs take seconds to import: only the type checker reads them here
    import anthropic
    import openai

log = logging.getLogger("envport.llm")

T = TypeVar("T")
#: Total seconds one attempt of a model call may take, answer included. Long enough for a
#: big answer at slow output rates (8k tokens at 60 tokens/s is about 140 s).
DEFAULT_TIMEOUT_S = 180.0
# 408 request timeout, 409 lock contention and 429 rate limit clear up by themselves.
TRANSIENT_4XX = frozenset({408, 409, 429})


@dataclass(frozen=True)
class SdkErrors:
    """Exception classes of both SDKs, grouped by what envport does with them."""

    # An HTTP error answer: both SDKs' classes carry `status_code` and the `response`.
    status: tuple[type[anthropic.APIStatusError | openai.APIStatusError], ...]
    connection: tuple[type[Exception], ...]
    timeout: tuple[type[Exception], ...]
    malformed: tuple[type[Exception], ...]


SDK_MODULES = ("anthropic", "openai")


def sdk_errors() -> SdkErrors:
    """The classes of the SDKs imported so far. An exception can only come from an SDK that
    is imported, and importing the other one here would block the event loop for seconds
    (during a cancellation, too) for nothing; commands that never call a model pay nothing."""
    return _errors_of(tuple(name for name in SDK_MODULES if name in sys.modules))


@functools.cache
def _errors_of(names: tuple[str, ...]) -> SdkErrors:
    modules = [sys.modules[name] for name in names]
    return SdkErrors(
        status=tuple(m.APIStatusError for m in modules),
        connection=tuple(m.APIConnectionError for m in modules),
        timeout=(*(m.APITimeoutError for m in modules), DeadlineExceeded),
        malformed=(
            json.JSONDecodeError,
            MalformedResponse,
            *(m.APIResponseValidationError for m in modules),
        ),
    )


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try. Tests shrink the waits; attempts counts the first try too."""

    attempts: int = 6
    initial_wait: float = 1.0
    max_wait: float = 60.0
    # A server asking for a longer pause than this gets this; an unattended run should not
    # sleep for an hour on one header.
    max_retry_after: float = 300.0

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError("RetryPolicy.attempts counts the first try and must be at least 1")


@dataclass(frozen=True)
class CallContext:
    """What an error message needs to say: which model, where, and which key to fix; and
    `timeout`, the total deadline of one attempt in seconds (the SDK's timeout too)."""

    name: str
    key_env: str
    base_url: str
    timeout: float
    secrets: Sequence[str | None] = field(default=(), repr=False)


def is_transient(exc: BaseException) -> bool:
    if not isinstance(exc, Exception):
        return False  # a cancellation or an interrupt is never retried
    errors = sdk_errors()
    if isinstance(exc, errors.status):
        verdict = exc.response.headers.get("x-should-retry")
        if verdict in ("true", "false"):
            return verdict == "true"  # the server knows better than the status code
        return exc.status_code in TRANSIENT_4XX or exc.status_code >= 500
    return isinstance(exc, errors.connection + errors.timeout + errors.malformed)


def retry_after_seconds(exc: BaseException) -> float | None:
    """The pause the server asked for: retry-after-ms, retry-after seconds, or an HTTP date."""
    response = getattr(exc, "response", None)
    if response is None:
        return None
    headers = response.headers
    try:
        if "retry-after-ms" in headers:
            return max(0.0, float(headers["retry-after-ms"]) / 1000)
        value = headers.get("retry-after")
        if value is None:
            return None
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_tz(value) if value else None
        if parsed is None:
            return None
        return max(0.0, email.utils.mktime_tz(parsed) - time.time())


class _Wait:
    """Backoff with jitter, unless the server said how long to wait."""

    def __init__(self, policy: RetryPolicy) -> None:
        self.policy = policy
        self.backoff = wait_exponential_jitter(
            multiplier=policy.initial_wait, max=policy.max_wait, jitter=policy.initial_wait
        )

    def __call__(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        asked = retry_after_seconds(exc) if exc is not None else None
        if asked is not None:
            return min(asked, self.policy.max_retry_after)
        return float(self.backoff(state))


async def call_with_retries(
    call: Callable[[], Awaitable[T]], *, policy: RetryPolicy, context: CallContext
) -> tuple[T, int]:
    """Run `call` until it succeeds; return its result and the number of attempts made."""

    def before_sleep(state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        wait = state.next_action.sleep if state.next_action else 0.0
        log.info(
            "%s: %s; retrying in %.1fs (attempt %d of %d)",
            context.name,
            describe(exc, context),
            wait,
            state.attempt_number + 1,
            policy.attempts,
        )

    retrying = AsyncRetrying(
        stop=stop_after_attempt(policy.attempts),
        wait=_Wait(policy),
        retry=retry_if_exception(is_transient),
        before_sleep=before_sleep,
        reraise=True,
    )
    attempts = 0
    try:
        async for attempt in retrying:
            with attempt:
                attempts = attempt.retry_state.attempt_number
                try:
                    result = await within_deadline(call, context.timeout)
                except MalformedResponse as exc:
                    if exc.charge is not None:
                        # May raise (no budget for another attempt): that ends the retries.
                        await charges.charge(exc.charge, retrying=attempts < policy.attempts)
                    raise
        return result, attempts
    except Exception as exc:
        raise as_model_call_error(exc, context, attempts) from None


async def within_deadline(call: Callable[[], Awaitable[T]], seconds: float) -> T:
    """One attempt, cancelled when `seconds` have passed: the request, every byte of the
    answer and reading it. The SDK's own timeout (the same seconds, per read) cuts a silent
    server at about the same moment; a trickling one only this deadline cuts."""
    scope = asyncio.timeout(seconds)
    try:
        async with scope:
            return await call()
    except TimeoutError:
        if scope.expired():
            raise DeadlineExceeded(f"no complete answer within {seconds:g}s") from None
        raise


def as_model_call_error(exc: Exception, context: CallContext, attempts: int) -> Exception:
    """The one-line error for a failed call; unknown exceptions pass through unchanged."""
    status = exc.status_code if isinstance(exc, sdk_errors().status) else None
    if is_transient(exc):
        tries = "attempt" if attempts == 1 else "attempts"
        return ModelCallError(
            f"{context.name}: gave up after {attempts} {tries}; last error: "
            f"{describe(exc, context)}",
            status=status,
            attempts=attempts,
            transient=True,
        )
    if status is None:
        return exc  # a bug, not an API answer: keep the traceback
    message = refusal_message(status, exc, context)
    return ModelCallError(message, status=status, attempts=attempts, transient=False)


def refusal_message(status: int, exc: Exception, context: CallContext) -> str:
    detail = api_detail(exc, context)
    if status == 401:
        return (
            f"{context.name}: the API rejected the key (HTTP 401); "
            f"set {context.key_env} to a valid key"
        )
    if status == 403:
        return f"{context.name}: the key may not use this model (HTTP 403): {detail}"
    if status == 404:
        return (
            f"{context.name}: not found at {context.base_url} (HTTP 404); "
            f"check the model name and the base URL: {detail}"
        )
    if status == 400:
        return f"{context.name}: the API refused the request (HTTP 400): {detail}"
    return f"{context.name}: HTTP {status}: {detail}"


def describe(exc: BaseException | None, context: CallContext) -> str:
    errors = sdk_errors()
    if isinstance(exc, errors.status):
        return f"HTTP {exc.status_code}: {api_detail(exc, context)}"
    if isinstance(exc, errors.timeout):
        return f"no answer within {context.timeout:g}s (timeout)"
    if isinstance(exc, errors.connection):
        return f"cannot connect to {context.base_url}"
    if isinstance(exc, MalformedResponse):
        return f"malformed response body ({one_line(exc.reason, context.secrets)})"
    if isinstance(exc, errors.malformed):
        return "malformed response body"
    return one_line(repr(exc), context.secrets)


def api_detail(exc: BaseException, context: CallContext) -> str:
    """The server's own error message, without the SDK's repr of the whole body."""
    body: Any = getattr(exc, "body", None)
    message: Any = None
    if isinstance(body, dict):
        error = body.get("error")
        message = error.get("message") if isinstance(error, dict) else body.get("message")
    if not message:
        message = getattr(exc, "message", None) or str(exc)
    return one_line(str(message), context.secrets)
