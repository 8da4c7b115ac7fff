"""The one retry layer: what is retried, how long it waits, and the one-line errors."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Iterator

import pytest

from envport.errors import EnvportError
from envport.llm import (
    AccountedModel,
    Message,
    ModelCallError,
    ModelRequest,
    Purpose,
    RetryPolicy,
    load_model,
)
from envport.llm.retry import retry_after_seconds

from fake_api import Answer, FakeAPI, RateLimited, ServerError, Slow, Status, Unauthorized

FAST = RetryPolicy(attempts=6, initial_wait=0.001, max_wait=0.01)
KEY = "sk-test-key-0000"
PROVIDERS = ["anthropic", "openai"]
MODELS = {"anthropic": "claude-haiku-4-5", "openai": "gpt-4o-mini"}
KEY_ENVS = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}


def make_request() -> ModelRequest:
    return ModelRequest(
        messages=[Message(role="user", text="write the step function")],
        max_tokens=64,
        purpose=Purpose(phase="generate", module="step"),
    )


@pytest.fixture
def api() -> Iterator[FakeAPI]:
    with FakeAPI() as server:
        yield server


def model_for(api: FakeAPI, provider: str, retry: RetryPolicy = FAST, timeout: float = 10.0):
    return load_model(
        f"{provider}:{MODELS[provider]}",
        base_url=api.base_url(provider),  # type: ignore[arg-type]
        api_key=KEY,
        retry=retry,
        timeout=timeout,
    )


@pytest.mark.parametrize("provider", PROVIDERS)
def test_three_rate_limits_then_success_is_one_recorded_call(api: FakeAPI, provider: str) -> None:
    answer = Answer("done", input_tokens=120, output_tokens=30)
    api.script([RateLimited(retry_after=0.05)] * 3 + [answer])
    accounted = AccountedModel(model_for(api, provider))
    started = time.monotonic()
    response = asyncio.run(accounted.complete(make_request()))
    elapsed = time.monotonic() - started

    assert response.text == "done" and response.attempts == 4
    assert api.hits[provider] == 4  # the SDK's own retries are off: no doubling
    assert elapsed >= 0.15  # three retry-after pauses of 0.05 s were honoured
    assert len(accounted.ledger.calls) == 1
    call = accounted.ledger.calls[0]
    assert (call.usage.input_tokens, call.usage.output_tokens) == (120, 30)
    assert call.attempts == 4
    assert accounted.ledger.usage.total == 150
    # gpt-4o-mini $0.15/$0.60, claude-haiku-4-5 $1/$5 per million tokens.
    rates = {"anthropic": (1.0, 5.0), "openai": (0.15, 0.6)}[provider]
    assert call.cost_usd == pytest.approx((120 * rates[0] + 30 * rates[1]) / 1e6)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_server_errors_beyond_the_bound_give_one_clear_line(api: FakeAPI, provider: str) -> None:
    api.script([ServerError(500)] * 6 + ["never reached"])
    with pytest.raises(ModelCallError) as caught:
        asyncio.run(model_for(api, provider).complete(make_request()))
    message = str(caught.value)
    assert message == (
        f"{provider}:{MODELS[provider]}: gave up after 6 attempts; "
        "last error: HTTP 500: internal server error"
    )
    assert caught.value.status == 500 and caught.value.transient
    assert api.hits[provider] == 6 and api.pending == 1


@pytest.mark.parametrize("provider", PROVIDERS)
def test_unauthorized_is_not_retried_and_names_the_variable(api: FakeAPI, provider: str) -> None:
    api.script([Unauthorized(), "never reached"])
    with pytest.raises(EnvportError) as caught:
        asyncio.run(model_for(api, provider).complete(make_request()))
    assert caught.value.exit_code == 2
    assert KEY_ENVS[provider] in str(caught.value)
    assert "HTTP 401" in str(caught.value)
    assert "\n" not in str(caught.value)
    assert api.hits[provider] == 1


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (400, "the API refused the request (HTTP 400): prompt is too long"),
        (403, "may not use this model (HTTP 403)"),
        (404, "not found at http://127.0.0.1"),
        (422, "HTTP 422: prompt is too long"),
    ],
)
def test_refusals_are_not_retried(api: FakeAPI, status: int, expected: str) -> None:
    api.script([Status(status, "prompt is\ntoo long"), "never reached"])
    with pytest.raises(ModelCallError, match=re.escape(expected)) as caught:
        asyncio.run(model_for(api, "openai").complete(make_request()))
    assert not caught.value.transient and caught.value.exit_code == 2
    assert api.hits["openai"] == 1


@pytest.mark.parametrize("provider", PROVIDERS)
def test_slow_answer_past_the_timeout_is_retried(api: FakeAPI, provider: str) -> None:
    api.script([Slow(delay=2.0), "in time"])
    response = asyncio.run(model_for(api, provider, timeout=0.3).complete(make_request()))
    assert response.text == "in time" and response.attempts == 2
    assert api.hits[provider] == 2


def test_timeouts_beyond_the_bound_say_so(api: FakeAPI) -> None:
    policy = RetryPolicy(attempts=2, initial_wait=0.001, max_wait=0.01)
    api.script([Slow(delay=2.0), Slow(delay=2.0)])
    expected = r"gave up after 2 attempts; last error: no answer within 0.2s \(timeout\)"
    with pytest.raises(ModelCallError, match=expected):
        asyncio.run(model_for(api, "openai", policy, timeout=0.2).complete(make_request()))


def test_connection_refused_is_retried_then_reported() -> None:
    with FakeAPI() as closed:
        base_url = closed.openai_base_url  # nothing listens here once the server stops
    policy = RetryPolicy(attempts=2, initial_wait=0.001, max_wait=0.01)
    model = load_model("openai:gpt-4o", base_url=base_url, api_key=KEY, retry=policy)
    with pytest.raises(ModelCallError, match=r"gave up after 2 attempts; .*cannot connect to"):
        asyncio.run(model.complete(make_request()))


def test_retry_after_forms() -> None:
    import httpx2

    def error(headers: dict[str, str]) -> Exception:
        exc = Exception()
        exc.response = httpx2.Response(429, headers=headers)  # type: ignore[attr-defined]
        return exc

    assert retry_after_seconds(error({"retry-after": "7"})) == 7.0
    assert retry_after_seconds(error({"retry-after-ms": "250", "retry-after": "7"})) == 0.25
    assert retry_after_seconds(error({})) is None
    date = "Wed, 21 Oct 2015 07:28:00 GMT"  # long past: wait nothing
    assert retry_after_seconds(error({"retry-after": date})) == 0.0
