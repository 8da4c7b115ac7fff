"""The fake API itself: what later whole-run tests rely on."""

from __future__ import annotations

import asyncio

import pytest

from envport.errors import EnvportError
from envport.llm import Message, ModelRequest, Purpose, RetryPolicy, load_model

from fake_api import FakeAPI

FAST = RetryPolicy(attempts=3, initial_wait=0.001, max_wait=0.01)


def make_request(text: str) -> ModelRequest:
    return ModelRequest(
        messages=[Message(role="user", text=text)],
        max_tokens=10,
        purpose=Purpose(phase="generate"),
    )


def test_responder_answers_from_the_prompt_once_the_script_is_empty() -> None:
    def responder(flavour: str, body: dict) -> str:
        return f"{flavour} saw: {body['messages'][-1]['content']}"

    with FakeAPI(responder=responder) as api:
        api.script(["scripted first"])
        model = load_model("openai:gpt-4o", base_url=api.openai_base_url, api_key="k", retry=FAST)
        texts = [asyncio.run(model.complete(make_request(t))).text for t in ("a", "b")]
    assert texts == ["scripted first", "openai saw: b"]
    assert api.hits == {"openai": 2} and api.pending == 0


def test_exhausted_script_fails_at_once() -> None:
    with FakeAPI() as api:
        model = load_model(
            "anthropic:claude-haiku-4-5", base_url=api.anthropic_base_url, api_key="k", retry=FAST
        )
        with pytest.raises(EnvportError, match="fake_api: script exhausted"):
            asyncio.run(model.complete(make_request("one too many")))
        assert api.hits["anthropic"] == 1
        assert api.requests[0].path == "/v1/messages"
        assert api.requests[0].headers["content-type"] == "application/json"
        assert api.requests[0].body["messages"][0]["content"][0]["text"] == "one too many"
