"""`openai:<model>`: Chat Completions through AsyncOpenAI, for OpenAI or any compatible
server (vLLM, Ollama, llama.cpp) reached with a base URL."""

from __future__ import annotations

import os
from typing import Any

import openai

from envport.errors import EnvportError
from envport.llm.failures import MalformedResponse
from envport.llm.prices import PriceTable
from envport.llm.retry import CallContext, RetryPolicy, call_with_retries
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
        timeout: float = 600.0,
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
            completion = await self.client.chat.completions.create(**params)
            return self._response(completion)

        response, attempts = await call_with_retries(call, policy=self.retry, context=self.context)
        return response.model_copy(update={"attempts": attempts})

    def _response(self, completion: Any) -> ModelResponse:
        choices = getattr(completion, "choices", None)
        if not choices or getattr(choices[0], "message", None) is None:
            raise MalformedResponse("no choices in the completion")
        choice = choices[0]
        usage = getattr(completion, "usage", None)
        tokens = TokenUsage()
        if usage is not None:  # some compatible servers leave usage out
            details = getattr(usage, "prompt_tokens_details", None)
            cached = (getattr(details, "cached_tokens", None) or 0) if details else 0
            written = (getattr(details, "cache_write_tokens", None) or 0) if details else 0
            prompt = usage.prompt_tokens or 0
            tokens = TokenUsage(
                input_tokens=max(0, prompt - cached - written),
                output_tokens=usage.completion_tokens or 0,
                cache_read_tokens=cached,
                cache_write_tokens=written,
            )
        model = getattr(completion, "model", None) or self.model_id
        raw_stop = choice.finish_reason
        return ModelResponse(
            text=choice.message.content or "",
            stop_reason=STOP_REASONS.get(raw_stop or "", raw_stop or "unknown"),
            raw_stop_reason=raw_stop,
            usage=tokens,
            model=model,
            cost_usd=self.prices.cost(self.model_id, tokens),  # as requested and budgeted
        )
