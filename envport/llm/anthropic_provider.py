"""`anthropic:<model>`: the Messages API through the official AsyncAnthropic client."""

from __future__ import annotations

import os
from typing import Any

import anthropic
from anthropic.types import (
    AssistantMessageParam,
    MessageParam,
    TextBlockParam,
    UserMessageParam,
)
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

from envport.errors import EnvportError
from envport.llm import answers
from envport.llm.failures import MalformedResponse, one_line
from envport.llm.prices import PriceTable
from envport.llm.retry import DEFAULT_TIMEOUT_S, CallContext, RetryPolicy, call_with_retries
from envport.llm.types import STOP_END, STOP_MAX_TOKENS, ModelRequest, ModelResponse, TokenUsage

KEY_ENV = "ANTHROPIC_API_KEY"
BASE_URL_ENV = "ANTHROPIC_BASE_URL"
DEFAULT_BASE_URL = "https://api.anthropic.com"

STOP_REASONS = {
    "end_turn": STOP_END,
    "stop_sequence": STOP_END,
    "max_tokens": STOP_MAX_TOKENS,
    # The context window filled up mid-answer: cut off like max_tokens.
    "model_context_window_exceeded": STOP_MAX_TOKENS,
}


class AnthropicModel:
    provider = "anthropic"

    def __init__(
        self,
        model_id: str,
        *,
        prices: PriceTable,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        retry: RetryPolicy | None = None,
    ) -> None:
        self.model_id = model_id
        self.name = f"{self.provider}:{model_id}"
        self.prices = prices
        self.retry = retry or RetryPolicy()
        self.base_url = base_url or os.environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL
        key = api_key or os.environ.get(KEY_ENV) or None
        # max_retries=0: envport's retry layer is the only one, so attempts are not multiplied.
        if key is not None:
            self.client = anthropic.AsyncAnthropic(
                api_key=key, base_url=self.base_url, timeout=timeout, max_retries=0
            )
        else:
            # Let the SDK find other credentials (auth token, profile); fail early if none.
            try:
                self.client = anthropic.AsyncAnthropic(
                    base_url=self.base_url, timeout=timeout, max_retries=0
                )
            except anthropic.CredentialsError as exc:
                raise EnvportError(
                    f"{self.name}: no usable credentials ({one_line(str(exc))}); set {KEY_ENV}"
                ) from None
            if not (self.client.api_key or self.client.auth_token or self.client.credentials):
                raise EnvportError(f"{self.name}: no API key; set {KEY_ENV}")
        self.context = CallContext(
            name=self.name,
            key_env=KEY_ENV,
            base_url=self.base_url,
            timeout=timeout,
            secrets=(self.client.api_key, self.client.auth_token),
        )

    def request_params(self, request: ModelRequest) -> MessageCreateParamsNonStreaming:
        """The Messages API body (typed by the SDK's own request types, so mypy checks its
        shape). The stable prefix is the first block of the first user turn, marked with
        `cache_control`: the cached prefix is then the system prompt and that block, which
        stay byte-identical across the calls of a run (a breakpoint caches everything before
        it). The 5-minute cache, the default, is the one priced as `cache_write`."""
        messages: list[MessageParam] = []
        for index, m in enumerate(request.messages):
            blocks: list[TextBlockParam] = []
            if index == 0 and request.stable_prefix:
                blocks.append(
                    {
                        "type": "text",
                        "text": request.stable_prefix,
                        "cache_control": {"type": "ephemeral"},
                    }
                )
            blocks.append({"type": "text", "text": m.text})
            if m.role == "user":
                messages.append(UserMessageParam(role="user", content=blocks))
            else:
                messages.append(AssistantMessageParam(role="assistant", content=blocks))
        params: MessageCreateParamsNonStreaming = {
            "model": self.model_id,
            "max_tokens": request.max_tokens,
            "messages": messages,
        }
        # No temperature: the Messages API of the anthropic 2.x SDK takes no sampling
        # parameters, so request.temperature only keys the cache for this provider.
        if request.system:
            params["system"] = request.system
        return params

    async def complete(self, request: ModelRequest) -> ModelResponse:
        params = self.request_params(request)

        async def call() -> ModelResponse:
            # The raw body: the SDK's parsed object would let odd types through unchecked.
            raw = await self.client.messages.with_raw_response.create(**params)
            return self._response(answers.body_object(raw.http_response.content), request)

        response, attempts = await call_with_retries(call, policy=self.retry, context=self.context)
        return response.model_copy(update={"attempts": attempts})

    def _response(self, body: dict[str, Any], request: ModelRequest) -> ModelResponse:
        price = self.prices.price_or_warn(self.model_id)
        tokens, answer = answers.read_completion(body, request, price, _usage, _answer)
        return ModelResponse(
            text=answer.text,
            stop_reason=STOP_REASONS.get(answer.raw_stop or "", answer.raw_stop or "unknown"),
            raw_stop_reason=answer.raw_stop,
            usage=tokens,
            model=answer.model or self.model_id,
            cost_usd=price.cost(tokens) if price is not None else 0.0,  # as budgeted
        )


def _usage(body: dict[str, Any]) -> TokenUsage:
    # The Messages API always reports usage; a message without it cannot be trusted.
    usage = answers.section(body.get("usage"), "usage", optional=False)
    return TokenUsage(
        input_tokens=answers.token_count(usage.get("input_tokens"), "usage.input_tokens"),
        output_tokens=answers.token_count(usage.get("output_tokens"), "usage.output_tokens"),
        cache_read_tokens=answers.token_count(
            usage.get("cache_read_input_tokens"), "usage.cache_read_input_tokens"
        ),
        cache_write_tokens=answers.token_count(
            usage.get("cache_creation_input_tokens"), "usage.cache_creation_input_tokens"
        ),
    )


def _answer(body: dict[str, Any]) -> answers.Answer:
    """The text blocks joined; other blocks (thinking, tool use) carry no answer text."""
    content = body.get("content")
    if not isinstance(content, list):
        raise MalformedResponse(f"content is {answers.kind(content)}, not a list of blocks")
    texts = []
    for index, block in enumerate(content):
        block = answers.section(block, f"content block {index}", optional=False)
        if block.get("type") == "text":
            texts.append(answers.text(block.get("text"), f"content block {index} text"))
    return answers.Answer(
        text="".join(texts),
        raw_stop=answers.name(body.get("stop_reason"), "stop_reason"),
        model=answers.name(body.get("model"), "model"),
    )
