"""Dollar prices per model, from the shipped table plus an optional user file."""

from __future__ import annotations

import logging
import os
import tomllib
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError, model_validator

from envport.errors import EnvportError
from envport.llm.types import TokenUsage

log = logging.getLogger("envport.llm")

PRICES_ENV = "ENVPORT_PRICES"
PER_MILLION = 1_000_000


class Price(BaseModel):
    """USD per million tokens."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cache_read: float | None = Field(default=None, ge=0)
    cache_write: float | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _default_cache_prices(self) -> Price:
        # A server without a cache discount (or an OpenAI-compatible local one) bills cached
        # tokens, if it reports any, as plain input.
        if self.cache_read is None:
            self.cache_read = self.input
        if self.cache_write is None:
            self.cache_write = self.input
        return self

    def cost(self, usage: TokenUsage) -> float:
        assert self.cache_read is not None and self.cache_write is not None
        return (
            usage.input_tokens * self.input
            + usage.output_tokens * self.output
            + usage.cache_read_tokens * self.cache_read
            + usage.cache_write_tokens * self.cache_write
        ) / PER_MILLION

    def worst_case(self, input_tokens: int, output_tokens: int) -> float:
        """The most a call can cost: every input token at the dearest input rate (cache
        reads included: a price file may make them dearer than fresh input)."""
        assert self.cache_read is not None and self.cache_write is not None
        input_rate = max(self.input, self.cache_read, self.cache_write)
        return (input_tokens * input_rate + output_tokens * self.output) / PER_MILLION


class PriceTable:
    """Prices keyed by model-id prefix; the longest matching prefix wins."""

    def __init__(self, prices: dict[str, Price]) -> None:
        self.prices = dict(prices)
        self._warned: set[str] = set()
        # A run capped in tokens is stopped by them: a model without a price needs no warning.
        self.quiet_when_unpriced = False

    def lookup(self, model_id: str) -> Price | None:
        matches = [prefix for prefix in self.prices if model_id.startswith(prefix)]
        if not matches:
            return None
        return self.prices[max(matches, key=len)]

    def price_or_warn(self, model_id: str) -> Price | None:
        price = self.lookup(model_id)
        if price is None and model_id not in self._warned and not self.quiet_when_unpriced:
            # Once per model: a long run would otherwise repeat it on every call.
            self._warned.add(model_id)
            log.warning(
                "no price for model %r: its calls count as $0 and a dollar budget cannot "
                "stop them; add it to a price file (%s=FILE)",
                model_id,
                PRICES_ENV,
            )
        return price

    def cost(self, model_id: str, usage: TokenUsage) -> float:
        price = self.price_or_warn(model_id)
        return price.cost(usage) if price is not None else 0.0

    def merged(self, overrides: dict[str, Price]) -> PriceTable:
        return PriceTable({**self.prices, **overrides})


def read_price_file(path: Path) -> dict[str, Price]:
    """Read a TOML price file: `[models."<prefix>"]` tables of per-million prices."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise EnvportError(f"price file {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise EnvportError(f"price file {path} cannot be read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise EnvportError(f"price file {path} is not valid TOML: {exc}") from None
    models = data.get("models")
    if not isinstance(models, dict):
        raise EnvportError(
            f'price file {path} has no [models."<model-id prefix>"] tables '
            "(with input, output, cache_read, cache_write in USD per million tokens)"
        )
    prices: dict[str, Price] = {}
    for prefix, entry in models.items():
        try:
            prices[prefix] = Price.model_validate(entry)
        except ValidationError as exc:
            problem = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'entry'}: {err['msg']}"
                for err in exc.errors()
            )
            raise EnvportError(f'price file {path}: models."{prefix}": {problem}') from None
    return prices


def builtin_prices() -> PriceTable:
    text = resources.files("envport.llm").joinpath("prices.toml").read_text(encoding="utf-8")
    models = tomllib.loads(text)["models"]
    return PriceTable({prefix: Price.model_validate(entry) for prefix, entry in models.items()})


def load_prices(path: Path | str | None = None) -> PriceTable:
    """The shipped prices, overridden entry by entry by `path` or else $ENVPORT_PRICES."""
    table = builtin_prices()
    user_path = path if path is not None else os.environ.get(PRICES_ENV) or None
    if user_path is None:
        return table
    return table.merged(read_price_file(Path(user_path)))
