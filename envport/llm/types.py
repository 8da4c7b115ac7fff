"""What goes into a model call and what comes out, independent of the provider."""

from __future__ import annotations

from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, model_validator

Role = Literal["user", "assistant"]

#: Normalised stop reasons; anything else is passed through as the provider said it.
STOP_END = "end"
STOP_MAX_TOKENS = "max_tokens"


class Message(BaseModel):
    model_config = ConfigDict(frozen=True)

    role: Role
    text: str


class Purpose(BaseModel):
    """Why a call is made: keys replay sessions and labels the transcript."""

    model_config = ConfigDict(frozen=True)

    phase: str
    module: str | None = None
    iteration: int = 0

    def label(self) -> str:
        module = f" {self.module}" if self.module else ""
        return f"{self.phase}{module} #{self.iteration}"


class ModelRequest(BaseModel):
    """One completion request.

    `stable_prefix` is the long part that stays the same across calls of a run (instructions
    and reference source). Providers put it first in the first user turn, so it forms a
    cacheable prefix; the anthropic provider marks it for prompt caching.
    """

    model_config = ConfigDict(frozen=True)

    system: str = ""
    stable_prefix: str = ""
    messages: list[Message]
    max_tokens: int = Field(gt=0)
    temperature: float = Field(default=0.0, ge=0.0)
    purpose: Purpose

    @model_validator(mode="after")
    def _starts_with_user(self) -> ModelRequest:
        # Both wire formats require a user turn first, and the stable prefix goes into it.
        if not self.messages or self.messages[0].role != "user":
            raise ValueError("messages must start with a user message")
        return self


class TokenUsage(BaseModel):
    """Tokens of one call or a sum of calls.

    `input_tokens` excludes cache reads and writes for every provider (OpenAI counts cached
    tokens inside prompt_tokens; the openai provider subtracts them), so each field is
    priced once at its own rate.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    @property
    def total(self) -> int:
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_read_tokens
            + self.cache_write_tokens
        )

    def cache_note(self) -> str:
        """The prompt cache's share of the total, for review and report ("" without one)."""
        parts = []
        if self.cache_read_tokens:
            parts.append(f"{self.cache_read_tokens:,} read from the prompt cache")
        if self.cache_write_tokens:
            parts.append(f"{self.cache_write_tokens:,} written to it")
        return ", ".join(parts)

    def described(self) -> str:
        """ "N tokens", with the prompt cache's share in brackets when there is one."""
        note = self.cache_note()
        return f"{self.total:,} tokens" + (f" ({note})" if note else "")

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
        )


class ModelResponse(BaseModel):
    """A completion. `usage` is what producing the answer took; `cost_usd` is what this call
    paid, so an answer served from the cache keeps its usage and costs 0."""

    text: str
    stop_reason: str
    raw_stop_reason: str | None = None
    usage: TokenUsage = Field(default_factory=TokenUsage)
    model: str
    cost_usd: float = 0.0
    cached: bool = False
    attempts: int = 1

    @property
    def truncated(self) -> bool:
        return self.stop_reason == STOP_MAX_TOKENS


@runtime_checkable
class Model(Protocol):
    """Anything that answers a ModelRequest.

    `name` is the provider-qualified spec (e.g. "anthropic:claude-sonnet-4-5") and keys the
    response cache; `provider` and `model_id` are its two halves.
    """

    name: str
    provider: str
    model_id: str

    async def complete(self, request: ModelRequest) -> ModelResponse: ...
