"""The model layer: providers, retries, usage and cost, budgets, cache, replay.

The pipeline builds one model with `load_model("anthropic:claude-sonnet-4-5")` and wraps it
in `AccountedModel` (cache, budget, ledger, journal); everything else is a library for that.
"""

from envport.llm.accounted import AccountedModel
from envport.llm.budget import BUDGET_EXHAUSTED, Budget, BudgetExhausted, estimate_input_tokens
from envport.llm.cache import ResponseCache, request_key
from envport.llm.failures import ModelCallError
from envport.llm.ledger import CallRecord, Ledger
from envport.llm.prices import PRICES_ENV, Price, PriceTable, load_prices
from envport.llm.registry import load_model
from envport.llm.replay import (
    ReplayModel,
    Session,
    SessionEntry,
    SessionRecorder,
    prompt_sha256,
    read_session,
)
from envport.llm.retry import RetryPolicy
from envport.llm.types import (
    STOP_END,
    STOP_MAX_TOKENS,
    Message,
    Model,
    ModelRequest,
    ModelResponse,
    Purpose,
    TokenUsage,
)

__all__ = [
    "BUDGET_EXHAUSTED",
    "PRICES_ENV",
    "STOP_END",
    "STOP_MAX_TOKENS",
    "AccountedModel",
    "Budget",
    "BudgetExhausted",
    "CallRecord",
    "Ledger",
    "Message",
    "Model",
    "ModelCallError",
    "ModelRequest",
    "ModelResponse",
    "Price",
    "PriceTable",
    "Purpose",
    "ReplayModel",
    "ResponseCache",
    "RetryPolicy",
    "Session",
    "SessionEntry",
    "SessionRecorder",
    "TokenUsage",
    "estimate_input_tokens",
    "load_model",
    "load_prices",
    "prompt_sha256",
    "read_session",
    "request_key",
]
