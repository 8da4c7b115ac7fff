"""A hostile model API, through the real SDKs against the local fake server: a call has a
total deadline, odd-typed bodies and untrustworthy usage are malformed (retried, counted at
the worst case), and control characters in server text are escaped."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from envport.llm import (
    AccountedModel,
    Budget,
    BudgetExhausted,
    Message,
    ModelCallError,
    ModelRequest,
    Purpose,
    RetryPolicy,
    estimate_input_tokens,
    load_model,
    load_prices,
)
from envport.llm.budget import WallTimeExhausted
from envport.llm.failures import one_line, printable
from envport.runs.journal import Journal

from fake_api import Answer, FakeAPI, Mangled, Silent, Status, Trickle

KEY = "sk-test-key-0000"
PROVIDERS = ["anthropic", "openai"]
MODELS = {"anthropic": "claude-haiku-4-5", "openai": "gpt-4o-mini"}
TWO_FAST = RetryPolicy(attempts=2, initial_wait=0.001, max_wait=0.01)
MAX_TOKENS = 64
# C0, DEL and C1 controls a hostile server might send: colour, window title (OSC ... BEL),
# clear screen, a lone C1 CSI.
HOSTILE = "\x1b]0;owned\x07\x1b[31mred\x1b[2J\x9b1m\x7f\x00end"
RAW_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def make_request() -> ModelRequest:
    return ModelRequest(
        messages=[Message(role="user", text="write the step function")],
        max_tokens=MAX_TOKENS,
        purpose=Purpose(phase="generate", module="step"),
    )


@pytest.fixture
def api() -> Iterator[FakeAPI]:
    with FakeAPI() as server:
        yield server


def model_for(
    api: FakeAPI, provider: str, *, timeout: float = 10.0, retry: RetryPolicy = TWO_FAST
) -> Any:
    return load_model(
        f"{provider}:{MODELS[provider]}",
        base_url=api.base_url(provider),  # type: ignore[arg-type]
        api_key=KEY,
        retry=retry,
        timeout=timeout,
    )


def worst_case_usd(provider: str) -> float:
    price = load_prices().lookup(MODELS[provider])
    assert price is not None
    return price.worst_case(estimate_input_tokens(make_request()), MAX_TOKENS)


# --- the deadline of one attempt --------------------------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("hostile", [Trickle(interval=0.2), Silent()], ids=["trickle", "silent"])
def test_a_trickling_or_silent_server_is_cut_at_the_deadline(
    api: FakeAPI, provider: str, hostile: Any
) -> None:
    # The trickled body takes minutes at one byte per 0.2 s, each read well inside the SDK's
    # per-read timeout: only the total deadline ends it.
    deadline = 1.0
    api.script([hostile, hostile, "never reached"])
    model = model_for(api, provider, timeout=deadline)  # imports the SDK: seconds
    started = time.monotonic()
    with pytest.raises(ModelCallError) as caught:
        asyncio.run(model.complete(make_request()))
    elapsed = time.monotonic() - started
    # Two attempts of one deadline each, plus waits of milliseconds and the SDK's setup;
    # the trickle alone would take minutes (a loaded machine only adds to the waits).
    assert 2 * deadline * 0.9 <= elapsed < 2 * deadline + 30, elapsed
    assert str(caught.value).endswith(
        "gave up after 2 attempts; last error: no answer within 1s (timeout)"
    )
    assert caught.value.transient and caught.value.exit_code == 2
    assert api.hits[provider] == 2 and api.pending == 1


def test_an_answer_after_a_trickle_is_taken(api: FakeAPI) -> None:
    api.script([Trickle(interval=0.2), Answer("in time", output_tokens=3)])
    response = asyncio.run(model_for(api, "openai", timeout=0.8).complete(make_request()))
    assert response.text == "in time" and response.attempts == 2


# --- the run's wall time, while a call is in flight ---------------------------------------------


def test_wall_time_cancels_a_call_in_flight(api: FakeAPI, tmp_path: Path) -> None:
    api.script([Silent()])
    budget = Budget(budget_usd=1.0)
    journal = tmp_path / "journal.jsonl"
    accounted = AccountedModel(
        model_for(api, "openai", timeout=30.0),
        budget=budget,
        journal=Journal(journal),
        time_left=lambda: 0.5,
    )
    started = time.monotonic()
    with pytest.raises(WallTimeExhausted, match="the generate step #0 call in flight"):
        asyncio.run(accounted.complete(make_request()))
    # Cancelled at the 0.5 s left, not at the 30 s call timeout (generous: load).
    assert time.monotonic() - started < 20
    assert api.hits["openai"] == 1
    # Nothing answered, nothing spent, nothing held back.
    assert accounted.ledger.calls == [] and budget.spent_usd == budget.reserved_usd == 0.0
    events = [json.loads(line) for line in journal.read_text().splitlines()]
    assert [e["event"] for e in events] == ["model_error"]


def test_no_time_left_makes_no_call(api: FakeAPI) -> None:
    accounted = AccountedModel(model_for(api, "openai"), time_left=lambda: -1.0)
    with pytest.raises(WallTimeExhausted, match="the generate step #0 call was not made"):
        asyncio.run(accounted.complete(make_request()))
    assert api.total_hits == 0


# --- bodies of unexpected types -------------------------------------------------------------------


def test_openai_content_as_a_list_of_parts_is_joined(api: FakeAPI) -> None:
    parts = [{"type": "text", "text": "def step():\n"}, {"type": "text", "text": "\treturn 1"}]
    api.script([Mangled("ignored", {"choices.0.message.content": parts})])
    accounted = AccountedModel(model_for(api, "openai"))
    response = asyncio.run(accounted.complete(make_request()))
    assert response.text == "def step():\n\treturn 1" and response.attempts == 1
    assert accounted.ledger.paid_calls == 1


def test_integral_float_usage_is_a_count(api: FakeAPI) -> None:
    api.script([Mangled("ok", {"usage.completion_tokens": 12.0})])
    response = asyncio.run(model_for(api, "openai").complete(make_request()))
    assert response.usage.output_tokens == 12


# (provider, changes, the reason in the error line, charged at the worst case?)
ODD_BODIES = [
    ("openai", {"choices.0.message.content": 42}, "message content is a number", False),
    ("openai", {"choices.0.message.content": [{"type": "image"}]}, "part 0 text is null", False),
    ("openai", {"choices.0.message.content": {"text": "x"}}, "is an object, not text", False),
    ("openai", {"choices": "none"}, "no choices", False),
    ("openai", {"model": 7}, "model is a number", False),
    ("openai", {"usage.completion_tokens": "12"}, "is a string, not a token count", True),
    ("openai", {"usage.completion_tokens": 12.5}, "is 12.5, not a whole number", True),
    ("openai", {"usage.prompt_tokens": True}, "is a boolean, not a token count", True),
    ("openai", {"usage.prompt_tokens": -99_000_000}, "is -99000000, out of range", True),
    ("openai", {"usage.completion_tokens": 10**40}, "beyond any real call", True),
    ("openai", {"usage.completion_tokens": MAX_TOKENS + 1}, "more than the 64", True),
    ("anthropic", {"content.0.text": 42}, "content block 0 text is a number", False),
    ("anthropic", {"content": "text"}, "content is a string, not a list", False),
    ("anthropic", {"stop_reason": ["end_turn"]}, "stop_reason is a list", False),
    ("anthropic", {"usage.output_tokens": -5}, "usage.output_tokens is -5", True),
    ("anthropic", {"usage.input_tokens": "many"}, "is a string", True),
    ("anthropic", {"usage": None}, "usage is null", True),
]


@pytest.mark.parametrize(("provider", "changes", "reason", "worst"), ODD_BODIES)
def test_odd_bodies_are_malformed_retried_and_charged(
    api: FakeAPI, tmp_path: Path, provider: str, changes: dict, reason: str, worst: bool
) -> None:
    odd = Mangled(Answer("odd", input_tokens=20, output_tokens=10), changes)
    api.script([odd, Answer("recovered", input_tokens=20, output_tokens=10)])
    journal = tmp_path / "journal.jsonl"
    accounted = AccountedModel(model_for(api, provider), journal=Journal(journal))
    response = asyncio.run(accounted.complete(make_request()))
    assert response.text == "recovered" and response.attempts == 2

    refused, answered = accounted.ledger.calls
    assert refused.stop_reason == "malformed" and answered.stop_reason == "end"
    if worst:  # the usage cannot be trusted: the most the request could have cost
        assert refused.cost_usd == pytest.approx(worst_case_usd(provider))
        assert refused.usage.output_tokens == MAX_TOKENS
    else:  # the usage was sound: counted as reported
        assert refused.usage == answered.usage and refused.cost_usd == answered.cost_usd
    assert refused.cost_usd > 0
    records = [json.loads(line) for line in journal.read_text().splitlines()]
    assert [r["stop_reason"] for r in records] == ["malformed", "end"]

    # The same twice more is one line naming the reason, with each refusal counted.
    api.script([odd, odd])
    with pytest.raises(ModelCallError) as caught:
        asyncio.run(accounted.complete(make_request().model_copy(update={"temperature": 0.5})))
    message = str(caught.value)
    assert "gave up after 2 attempts; last error: malformed response body (" in message
    assert reason in message and "\n" not in message and caught.value.exit_code == 2
    assert [c.stop_reason for c in accounted.ledger.calls[2:]] == ["malformed", "malformed"]


def test_negative_usage_cannot_lower_the_spending_below_the_cap(api: FakeAPI) -> None:
    # Reported as is, -99M input tokens would be -$99 and the cap would stop nothing. Each
    # refused answer is counted at the worst case instead, and each attempt reserves one.
    provider = "openai"
    worst = worst_case_usd(provider)
    negative = Mangled("cheap", {"usage.prompt_tokens": -99_000_000})
    api.script([negative] * 6)
    budget = Budget(budget_usd=2.5 * worst)
    retrying = RetryPolicy(attempts=6, initial_wait=0.001, max_wait=0.01)
    accounted = AccountedModel(model_for(api, provider, retry=retrying), budget=budget)
    with pytest.raises(BudgetExhausted, match="again, after a malformed answer"):
        asyncio.run(accounted.complete(make_request()))
    assert api.hits[provider] == 2  # a third attempt could pass the cap: not made
    assert budget.spent_usd == pytest.approx(2 * worst) and budget.reserved_usd == 0.0
    assert accounted.ledger.cost_usd == pytest.approx(2 * worst)
    assert budget.spent_usd <= budget.budget_usd


# --- control characters in server text --------------------------------------------------------


def test_printable_escapes_controls_and_keeps_lines_of_code() -> None:
    assert printable("a\x1b[31mb\x9bc\x07") == "a\\x1b[31mb\\x9bc\\x07"
    assert printable("line\r\n\tindent\rover", multiline=True) == "line\n\tindent\\x0dover"
    assert printable("a\nb\tc") == "a\\x0ab\\x09c"
    assert one_line(f"HTTP 400:\n {HOSTILE}") == (
        "HTTP 400: \\x1b]0;owned\\x07\\x1b[31mred\\x1b[2J\\x9b1m\\x7f\\x00end"
    )
    assert printable("naïve → ünïcode ✓") == "naïve → ünïcode ✓"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_escape_sequences_in_an_error_body_are_escaped(
    api: FakeAPI, tmp_path: Path, provider: str
) -> None:
    api.script([Status(400, HOSTILE)])
    journal = tmp_path / "journal.jsonl"
    accounted = AccountedModel(model_for(api, provider), journal=Journal(journal))
    with pytest.raises(ModelCallError) as caught:
        asyncio.run(accounted.complete(make_request()))
    message = str(caught.value)
    assert not RAW_CONTROLS.search(message), message
    assert "\\x1b]0;owned\\x07\\x1b[31mred" in message
    logged = json.loads(journal.read_text())["message"]
    assert not RAW_CONTROLS.search(logged) and "\\x1b[2J" in logged


@pytest.mark.parametrize("provider", PROVIDERS)
def test_escape_sequences_in_an_answer_are_escaped(api: FakeAPI, provider: str) -> None:
    api.script([Answer(f"def step():\n\treturn '{HOSTILE}'\r\n", model=f"m\x1b[5m{provider}")])
    response = asyncio.run(model_for(api, provider).complete(make_request()))
    assert not RAW_CONTROLS.search(response.text + response.model)
    assert response.text.startswith("def step():\n\treturn '\\x1b]0;owned\\x07")
    assert response.text.endswith("\\x00end'\n")
    assert response.model == f"m\\x1b[5m{provider}"
