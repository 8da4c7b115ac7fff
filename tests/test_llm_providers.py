"""Both providers through the real SDKs against the local fake API."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from envport.errors import EnvportError
from envport.llm import (
    STOP_END,
    STOP_MAX_TOKENS,
    Message,
    ModelCallError,
    ModelRequest,
    Purpose,
    RetryPolicy,
    load_model,
    load_prices,
)

from fake_api import Answer, FakeAPI, Malformed, Truncated

FAST = RetryPolicy(attempts=3, initial_wait=0.001, max_wait=0.01)
KEY = "sk-test-key-0000"


def make_request(text: str = "port the physics", **kwargs: object) -> ModelRequest:
    fields: dict = {
        "system": "You port RL environments.",
        "stable_prefix": "INSTRUCTIONS AND REFERENCE SOURCE " * 10,
        "messages": [Message(role="user", text=text)],
        "max_tokens": 256,
        "temperature": 0.0,
        "purpose": Purpose(phase="generate", module="physics", iteration=0),
    }
    fields.update(kwargs)
    return ModelRequest(**fields)


@pytest.fixture
def api() -> Iterator[FakeAPI]:
    with FakeAPI() as server:
        yield server


def model_for(api: FakeAPI, provider: str, model_id: str = "claude-sonnet-4-6"):
    if provider == "openai" and model_id.startswith("claude"):
        model_id = "gpt-4.1"
    return load_model(
        f"{provider}:{model_id}",
        base_url=api.base_url(provider),  # type: ignore[arg-type]
        api_key=KEY,
        retry=FAST,
        prices=load_prices(),
    )


def test_anthropic_marks_stable_prefix_for_caching_and_reads_cache_tokens(api: FakeAPI) -> None:
    api.script(
        [
            Answer(
                "def step(): ...",
                input_tokens=50,
                output_tokens=20,
                cache_read_tokens=1000,
                cache_write_tokens=300,
                model="claude-sonnet-4-6-20260101",
            )
        ]
    )
    model = model_for(api, "anthropic")
    request = make_request()
    response = asyncio.run(model.complete(request))

    body = api.requests[0].body
    first_turn = body["messages"][0]["content"]
    assert first_turn[0] == {
        "type": "text",
        "text": request.stable_prefix,
        "cache_control": {"type": "ephemeral"},
    }
    assert first_turn[1] == {"type": "text", "text": "port the physics"}
    assert body["system"] == "You port RL environments."
    assert body["max_tokens"] == 256 and body["model"] == "claude-sonnet-4-6"

    assert response.text == "def step(): ..."
    assert response.stop_reason == STOP_END and response.raw_stop_reason == "end_turn"
    assert response.model == "claude-sonnet-4-6-20260101"
    usage = response.usage
    assert (usage.input_tokens, usage.output_tokens) == (50, 20)
    assert (usage.cache_read_tokens, usage.cache_write_tokens) == (1000, 300)
    # Priced as claude-sonnet-4, per million: $3 in, $15 out, $0.30 cache read, $3.75 write.
    expected = (50 * 3 + 20 * 15 + 1000 * 0.3 + 300 * 3.75) / 1e6
    assert response.cost_usd == pytest.approx(expected)
    assert response.attempts == 1


def test_openai_puts_prefix_first_and_subtracts_cached_tokens(api: FakeAPI) -> None:
    api.script([Answer("ok", input_tokens=40, output_tokens=10, cache_read_tokens=600)])
    model = model_for(api, "openai")
    request = make_request()
    response = asyncio.run(model.complete(request))

    body = api.requests[0].body
    assert body["messages"][0] == {"role": "system", "content": "You port RL environments."}
    assert body["messages"][1]["content"] == f"{request.stable_prefix}\n\nport the physics"
    assert body["max_tokens"] == 256 and body["temperature"] == 0.0
    # prompt_tokens was 640 with 600 cached: the 40 uncached are billed at the input rate.
    assert response.usage.input_tokens == 40
    assert response.usage.cache_read_tokens == 600
    assert response.cost_usd == pytest.approx((40 * 2.0 + 10 * 8.0 + 600 * 0.5) / 1e6)


def test_openai_reasoning_models_get_max_completion_tokens(api: FakeAPI) -> None:
    api.script(["ok"])
    asyncio.run(model_for(api, "openai", "o4-mini").complete(make_request()))
    body = api.requests[0].body
    assert body["max_completion_tokens"] == 256
    assert "max_tokens" not in body and "temperature" not in body


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_truncated_answer_reports_max_tokens(api: FakeAPI, provider: str) -> None:
    api.script([Truncated("def step(state, act", output_tokens=256)])
    response = asyncio.run(model_for(api, provider).complete(make_request()))
    assert response.stop_reason == STOP_MAX_TOKENS
    assert response.truncated
    assert response.raw_stop_reason == ("max_tokens" if provider == "anthropic" else "length")
    assert response.text == "def step(state, act"


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_malformed_body_is_retried_then_reported(api: FakeAPI, provider: str) -> None:
    api.script([Malformed(), "recovered"])
    model = model_for(api, provider)
    response = asyncio.run(model.complete(make_request()))
    assert response.text == "recovered" and response.attempts == 2

    api.script([Malformed()] * 3)
    with pytest.raises(ModelCallError) as caught:
        asyncio.run(model.complete(make_request()))
    assert "gave up after 3 attempts" in str(caught.value)
    assert "malformed response body" in str(caught.value)


def test_openai_compatible_server_needs_no_key(api: FakeAPI, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    api.script(["local answer"])
    model = load_model("openai:qwen2.5-coder", base_url=api.openai_base_url, retry=FAST)
    assert asyncio.run(model.complete(make_request())).text == "local answer"


def test_base_url_from_environment(api: FakeAPI, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", api.openai_base_url)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", api.anthropic_base_url)
    api.script(["from openai", "from anthropic"])
    for spec in ("openai:gpt-4o", "anthropic:claude-haiku-4-5"):
        asyncio.run(load_model(spec, api_key=KEY, retry=FAST).complete(make_request()))
    assert api.hits == {"openai": 1, "anthropic": 1}


def test_missing_openai_key_for_the_real_api_is_one_clear_line(monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(EnvportError, match="set OPENAI_API_KEY"):
        load_model("openai:gpt-4o")


@pytest.mark.parametrize("spec", ["gpt-4o", "mystery:model", "anthropic:"])
def test_bad_model_string(spec: str) -> None:
    with pytest.raises(EnvportError, match="<provider>:<model>"):
        load_model(spec)


def test_request_must_start_with_a_user_turn() -> None:
    with pytest.raises(ValueError, match="start with a user message"):
        make_request(messages=[Message(role="assistant", text="hi")])


def test_missing_anthropic_credentials_are_one_clear_line(tmp_path, monkeypatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_CONFIG_DIR", str(tmp_path))  # no profiles on disk
    with pytest.raises(EnvportError, match="set ANTHROPIC_API_KEY") as caught:
        load_model("anthropic:claude-haiku-4-5")
    assert "\n" not in str(caught.value)
