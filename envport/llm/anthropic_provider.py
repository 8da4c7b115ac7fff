"""`anthropic:<model>`: the Messages API through the official AsyncAnthropic client."""

from __future__ import annotations

import os
from typing import Any

import anthropic

from envport.errors import EnvportError
from envport.llm.failures import MalformedResponse, one_line
from envport.llm.prices import PriceTable
from envport.llm.retry import CallContext, RetryPolicy, call_with_retries
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
        timeout: float = 600.0,
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

    def request_params(self, request: ModelRequest) -> dict[str, Any]:
        """The Messages API body, with the stable prefix as its own cached block."""
        messages: list[dict[str, Any]] = [
            {"role": m.role, "content": [{"type": "text", "text": m.text}]}
            for m in request.messages
        ]
        if request.stable_prefix:
            prefix_block = {
                "type": "text",
                "text": request.stable_prefix,
                "cache_control": {"type": "ephemeral"},
            }
            messages[0]["content"].insert(0, prefix_block)
        params: dict[str, Any] = {
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
            message = await self.client.messages.create(**params)
            return self._response(message)

        response, attempts = await call_with_retries(call, policy=self.retry, context=self.context)
        return response.model_copy(update={"attempts": attempts})

    def _response(self, message: Any) -> ModelResponse:
        content = getattr(message, "content", None)
        usage = getattr(message, "usage", None)
        if not isinstance(content, list) or usage is None:
            raise MalformedResponse("no content or usage in the message")
        text = "".join(getattr(block, "text", "") or "" for block in content)
        tokens = TokenUsage(
            input_tokens=usage.input_tokens or 0,
            output_tokens=usage.output_tokens or 0,
            cache_read_tokens=usage.cache_read_input_tokens or 0,
            cache_write_tokens=usage.cache_creation_input_tokens or 0,
        )
        model = getattr(message, "model", None) or self.model_id
        raw_stop = getattr(message, "stop_reason", None)
        return ModelResponse(
            text=text,
            stop_reason=STOP_REASONS.get(raw_stop or "", raw_stop or "unknown"),
            raw_stop_reason=raw_stop,
            usage=tokens,
            model=model,
            cost_usd=self.prices.cost(self.model_id, tokens),  # as requested and budgeted
        )
