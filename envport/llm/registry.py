"""Providers chosen by a model string: `anthropic:<model>`, `openai:<model>`, `replay:<dir>`."""

from __future__ import annotations

from pathlib import Path

from envport.errors import EnvportError
from envport.llm.prices import PriceTable, load_prices
from envport.llm.replay import ReplayModel
from envport.llm.retry import DEFAULT_TIMEOUT_S, RetryPolicy
from envport.llm.types import Model

PROVIDERS = ("anthropic", "openai", "replay")


def load_model(
    spec: str,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    retry: RetryPolicy | None = None,
    prices: PriceTable | Path | str | None = None,
) -> Model:
    """The model a spec string names.

    `base_url` falls back to ANTHROPIC_BASE_URL / OPENAI_BASE_URL, `api_key` to
    ANTHROPIC_API_KEY / OPENAI_API_KEY. `timeout` is the total deadline of one attempt.
    `prices` is a table, or a TOML file overriding the shipped one (else $ENVPORT_PRICES).
    """
    provider, sep, rest = spec.partition(":")
    if not sep or not rest or provider not in PROVIDERS:
        raise EnvportError(
            f"model {spec!r} is not <provider>:<model>; use anthropic:<model>, "
            "openai:<model> or replay:<session dir>"
        )
    if provider == "replay":
        return ReplayModel(rest)
    table = prices if isinstance(prices, PriceTable) else load_prices(prices)
    # Imported here: each SDK takes a second or more to import.
    if provider == "anthropic":
        from envport.llm.anthropic_provider import AnthropicModel

        return AnthropicModel(
            rest, prices=table, api_key=api_key, base_url=base_url, timeout=timeout, retry=retry
        )
    from envport.llm.openai_provider import OpenAIModel

    return OpenAIModel(
        rest, prices=table, api_key=api_key, base_url=base_url, timeout=timeout, retry=retry
    )
