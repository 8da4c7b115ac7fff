"""`openai:<model>`: Chat Completions through AsyncOpenAI, for OpenAI or any compatible
server (vLLM, Ollama, llama.cpp) reached with a base URL."""

from __future__ import annotations

import os
from typing import Any

import openai

from envport.errors import EnvportError
from envport.llm import answers
from envport.llm.failures import MalformedResponse
from envport.llm.prices import PriceTable
from envport.llm.retry import DEFAULT_TIMEOUT_S, CallContext, RetryPolicy, call_with_retries
from envport.llm.types import STOP_END, STOP_MAX_TOKENS, ModelRequest, ModelResponse, TokenUsage

KEY_ENV = "OPENAI_API_KEY"
BASE_URL_ENV = "OPENAI_BASE_URL"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
# Local servers ignore the key but the SDK insists on one.
LOCAL_PLACEHOLDER_KEY = "not-needed"

STOP_REASONS = {"stop": STOP_END, "length": STOP_MAX_TOKENS}

# Reasoning models take max_completion_tokens and only the default temperature.
REASONING_PREFIXES = ("o1", "o3", "o4", "gpt-5")


def is_reasoning_model(model_id: str) -> bool:
    return model_id.startswith(REASONING_PREFIXES)


class OpenAIModel:
    provider = "openai"

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
        if key is None:
            if self.base_url.rstrip("/") == DEFAULT_BASE_URL:
                raise EnvportError(f"{self.name}: no API key; set {KEY_ENV}")
            key = LOCAL_PLACEHOLDER_KEY
        # max_retries=0: envport's retry layer is the only one, so attempts are not multiplied.
        self.client = openai.AsyncOpenAI(
            api_key=key, base_url=self.base_url, timeout=timeout, max_retries=0
        )
        self.context = CallContext(
            name=self.name,
            key_env=KEY_ENV,
            base_url=self.base_url,
            timeout=timeout,
            secrets=(key,) if key != LOCAL_PLACEHOLDER_KEY else (),
        )

    def request_params(self, request: ModelRequest) -> dict[str, Any]:
        """The Chat Completions body. The stable prefix leads the first user message (plain
        string content, which every compatible server accepts), so automatic prefix caching
        can reuse it."""
        messages: list[dict[str, Any]] = []
        if request.system:
            messages.append({"role": "system", "content": request.system})
        for index, m in enumerate(request.messages):
            text = m.text
            if index == 0 and request.stable_prefix:
                text = f"{request.stable_prefix}\n\n{text}"
            messages.append({"role": m.role, "content": text})
        params: dict[str, Any] = {"model": self.model_id, "messages": messages}
        if is_reasoning_model(self.model_id):
            params["max_completion_tokens"] = request.max_tokens
        else:
            params["max_tokens"] = request.max_tokens
            params["temperature"] = request.temperature
        return params

    async def complete(self, request: ModelRequest) -> ModelResponse:
        params = self.request_params(request)

        async def call() -> ModelResponse:
            # The raw body: the SDK's parsed object would let odd types through unchecked.
            raw = await self.client.chat.completions.with_raw_response.create(**params)
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
    """Usage with cached tokens taken out of prompt_tokens (OpenAI counts them inside).
    Some compatible servers leave usage out: then it is zero."""
    usage = answers.section(body.get("usage"), "usage")
    details = answers.section(usage.get("prompt_tokens_details"), "usage.prompt_tokens_details")
    prompt = answers.token_count(usage.get("prompt_tokens"), "usage.prompt_tokens")
    cached = answers.token_count(details.get("cached_tokens"), "usage cached_tokens")
    written = answers.token_count(details.get("cache_write_tokens"), "usage cache_write_tokens")
    return TokenUsage(
        input_tokens=max(0, prompt - cached - written),
        output_tokens=answers.token_count(
            usage.get("completion_tokens"), "usage.completion_tokens"
        ),
        cache_read_tokens=cached,
        cache_write_tokens=written,
    )


def _answer(body: dict[str, Any]) -> answers.Answer:
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices:
        raise MalformedResponse("no choices in the completion")
    choice = answers.section(choices[0], "choices[0]", optional=False)
    message = answers.section(choice.get("message"), "the message", optional=False)
    return answers.Answer(
        text=_content(message.get("content")),
        raw_stop=answers.name(choice.get("finish_reason"), "finish_reason"),
        model=answers.name(body.get("model"), "model"),
    )


def _content(content: Any) -> str:
    """Message content: a string, null (no text), or a list of text parts as proxies send
    (`[{"type": "text", "text": ...}]`), joined."""
    if content is None:
        return ""
    if isinstance(content, list):
        parts = []
        for index, part in enumerate(content):
            where = f"message content part {index}"
            parts.append(answers.text(answers.section(part, where).get("text"), f"{where} text"))
        return "".join(parts)
    return answers.text(content, "message content")
