"""Prices, the ledger, the response cache, budgets and the journal, over the real SDKs."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from envport.errors import EnvportError
from envport.llm import (
    BUDGET_EXHAUSTED,
    AccountedModel,
    Budget,
    BudgetExhausted,
    Ledger,
    Message,
    ModelRequest,
    Purpose,
    RetryPolicy,
    TokenUsage,
    load_model,
    load_prices,
)
from envport.runs.journal import Journal

from fake_api import Answer, FakeAPI

FAST = RetryPolicy(attempts=3, initial_wait=0.001, max_wait=0.01)
KEY = "sk-test-key-0000"
FAKE_PRICES = """
[models."fake-model"]
input = 10.0
output = 1000.0
"""


def make_request(text: str = "write physics", iteration: int = 0, **kwargs: object) -> ModelRequest:
    fields: dict = {
        "messages": [Message(role="user", text=text)],
        "max_tokens": 4,
        "purpose": Purpose(phase="repair", module="physics", iteration=iteration),
    }
    fields.update(kwargs)
    return ModelRequest(**fields)


@pytest.fixture
def api() -> Iterator[FakeAPI]:
    with FakeAPI() as server:
        yield server


@pytest.fixture
def price_file(tmp_path: Path) -> Path:
    path = tmp_path / "prices.toml"
    path.write_text(FAKE_PRICES)
    return path


# --- prices -------------------------------------------------------------------------------


def test_longest_prefix_wins() -> None:
    prices = load_prices()
    assert prices.lookup("claude-opus-4-1-20250805").input == 15.0  # claude-opus-4
    assert prices.lookup("claude-opus-4-5-20251101").input == 5.0  # claude-opus-4-5
    assert prices.lookup("gpt-4o-mini-2024-07-18").input == 0.15  # not gpt-4o
    assert prices.lookup("o3-mini").output == 4.4  # not o3
    assert prices.lookup("llama3:8b") is None


def test_user_file_extends_and_overrides(price_file: Path) -> None:
    price_file.write_text(FAKE_PRICES + '\n[models."gpt-4o"]\ninput = 1.0\noutput = 2.0\n')
    prices = load_prices(price_file)
    fake = prices.lookup("fake-model")
    assert (fake.input, fake.output, fake.cache_read, fake.cache_write) == (10, 1000, 10, 10)
    assert prices.lookup("gpt-4o-2024-08-06").output == 2.0
    assert prices.lookup("claude-sonnet-4-6").input == 3.0  # the rest is still shipped


def test_price_file_from_environment(price_file: Path, monkeypatch) -> None:
    monkeypatch.setenv("ENVPORT_PRICES", str(price_file))
    assert load_prices().lookup("fake-model") is not None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[models.x\n", "is not valid TOML"),
        ("[other]\n", "has no [models."),
        ('[models."x"]\ninput = -1\noutput = 1\n', 'models."x": input: Input should be'),
        ('[models."x"]\ninput = 1\n', 'models."x": output: Field required'),
    ],
)
def test_bad_price_file_is_one_clear_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "p.toml"
    path.write_text(text)
    with pytest.raises(EnvportError, match=message.replace("[", r"\[").replace(".", r"\.")):
        load_prices(path)
    with pytest.raises(EnvportError, match="does not exist"):
        load_prices(tmp_path / "missing.toml")


def test_unknown_model_costs_zero_and_warns_once(api: FakeAPI, caplog) -> None:
    api.script([Answer("a", output_tokens=3), Answer("b", output_tokens=3)])
    model = load_model("openai:llama3:8b", base_url=api.openai_base_url, api_key=KEY, retry=FAST)
    with caplog.at_level(logging.WARNING, logger="envport.llm"):
        first = asyncio.run(model.complete(make_request("a")))
        asyncio.run(model.complete(make_request("b")))
    assert first.cost_usd == 0.0 and first.usage.output_tokens == 3
    warnings = [r for r in caplog.records if "no price for model 'llama3:8b'" in r.getMessage()]
    assert len(warnings) == 1


@pytest.mark.parametrize(
    ("caps", "warned"), [({"budget_tokens": 10_000}, 0), ({"budget_usd": 1.0}, 1)]
)
def test_no_price_warning_only_where_dollars_are_what_stops_the_run(
    api: FakeAPI, caplog, tmp_path: Path, caps: dict, warned: int
) -> None:
    api.script([Answer("a", output_tokens=3)])
    model = load_model("openai:llama3:8b", base_url=api.openai_base_url, api_key=KEY, retry=FAST)
    accounted = AccountedModel(model, cache_dir=tmp_path / "cache", budget=Budget(**caps))
    with caplog.at_level(logging.WARNING, logger="envport.llm"):
        asyncio.run(accounted.complete(make_request("a")))
    warnings = [r for r in caplog.records if "no price for model" in r.getMessage()]
    assert len(warnings) == warned


# --- cache --------------------------------------------------------------------------------


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_cache_turns_a_repeated_request_into_zero_server_hits(
    api: FakeAPI, tmp_path: Path, provider: str
) -> None:
    api.script([Answer("cached answer", input_tokens=10, output_tokens=4)])
    spec = {"anthropic": "anthropic:claude-haiku-4-5", "openai": "openai:gpt-4.1"}[provider]
    base_url = api.base_url(provider)  # type: ignore[arg-type]
    model = load_model(spec, base_url=base_url, api_key=KEY, retry=FAST)
    accounted = AccountedModel(model, cache_dir=tmp_path / "cache")

    first = asyncio.run(accounted.complete(make_request()))
    second = asyncio.run(accounted.complete(make_request(iteration=1)))
    assert api.hits[provider] == 1
    assert second.text == first.text == "cached answer"
    assert second.cached and second.cost_usd == 0.0 and first.cost_usd > 0
    assert second.usage == first.usage  # what the answer took, though nothing was paid now

    ledger = accounted.ledger
    assert [c.cached for c in ledger.calls] == [False, True]
    assert ledger.paid_calls == 1 and ledger.cached_calls == 1
    assert ledger.cost_usd == pytest.approx(first.cost_usd)
    assert ledger.usage.total == 14

    # A resumed run (new process, same run directory) pays nothing either.
    resumed = AccountedModel(
        load_model(spec, base_url=base_url, api_key=KEY, retry=FAST), cache_dir=tmp_path / "cache"
    )
    assert asyncio.run(resumed.complete(make_request())).cached
    assert api.hits[provider] == 1


def test_cache_key_covers_sampling_params_and_prompt(api: FakeAPI, tmp_path: Path) -> None:
    api.script(["a", "b", "c", "d"])
    model = load_model("openai:gpt-4o", base_url=api.openai_base_url, api_key=KEY, retry=FAST)
    accounted = AccountedModel(model, cache_dir=tmp_path / "cache")
    for request in (
        make_request(),
        make_request(temperature=0.7),
        make_request(max_tokens=5),
        make_request(stable_prefix="reference source"),
    ):
        assert not asyncio.run(accounted.complete(request)).cached
    assert api.hits["openai"] == 4
    assert len(list((tmp_path / "cache").glob("*.json"))) == 4


def test_identical_requests_in_flight_pay_once(api: FakeAPI, tmp_path: Path) -> None:
    api.script(["only once"])
    model = load_model("openai:gpt-4o", base_url=api.openai_base_url, api_key=KEY, retry=FAST)
    accounted = AccountedModel(model, cache_dir=tmp_path / "cache")

    async def both() -> list:
        return await asyncio.gather(*(accounted.complete(make_request()) for _ in range(2)))

    answers = asyncio.run(both())
    assert [a.text for a in answers] == ["only once"] * 2
    assert sorted(a.cached for a in answers) == [False, True]
    assert api.hits["openai"] == 1


def test_damaged_cache_entry_is_a_miss(api: FakeAPI, tmp_path: Path) -> None:
    api.script(["first", "second"])
    model = load_model("openai:gpt-4o", base_url=api.openai_base_url, api_key=KEY, retry=FAST)
    accounted = AccountedModel(model, cache_dir=tmp_path / "cache")
    asyncio.run(accounted.complete(make_request()))
    (entry,) = (tmp_path / "cache").glob("*.json")
    entry.write_text("{ torn")
    assert asyncio.run(accounted.complete(make_request())).text == "second"


# --- budget -------------------------------------------------------------------------------


def test_budget_stops_before_the_call_that_could_pass_the_cap(
    api: FakeAPI, tmp_path: Path, price_file: Path
) -> None:
    # fake-model: $10 in, $1000 out per million. Each answer: 10 in, 4 out = $0.0041.
    # Each call's worst case: 18 estimated input tokens and all 4 max_tokens = $0.00418.
    # After two calls $0.0082 is spent; a third could reach ~$0.0124 > $0.01.
    api.script([Answer(f"answer {i}", input_tokens=10, output_tokens=4) for i in range(5)])
    model = load_model(
        "openai:fake-model",
        base_url=api.openai_base_url,
        api_key=KEY,
        retry=FAST,
        prices=price_file,
    )
    budget = Budget(budget_usd=0.01)
    journal = tmp_path / "journal.jsonl"
    cache = tmp_path / "cache"
    accounted = AccountedModel(model, cache_dir=cache, budget=budget, journal=Journal(journal))

    async def run() -> int:
        done = 0
        for i in range(5):
            await accounted.complete(make_request(f"task {i}", iteration=i))
            done += 1
        return done

    with pytest.raises(BudgetExhausted) as caught:
        asyncio.run(run())
    assert caught.value.status == BUDGET_EXHAUSTED == "budget_exhausted"
    assert "repair physics #2" in str(caught.value) and "$0.01 cap" in str(caught.value)
    assert api.hits["openai"] == 2
    assert accounted.ledger.paid_calls == 2
    assert accounted.ledger.cost_usd == pytest.approx(0.0082)
    assert budget.spent_usd == pytest.approx(0.0082) and budget.reserved_usd == 0.0
    events = [json.loads(line)["event"] for line in journal.read_text().splitlines()]
    assert events == ["model_call", "model_call", "budget_exhausted"]

    # With nothing left, an answer already paid for is still served: the cache is free.
    broke = AccountedModel(model, cache_dir=cache, budget=Budget(budget_usd=0.0))
    assert asyncio.run(broke.complete(make_request("task 0"))).text == "answer 0"
    with pytest.raises(BudgetExhausted):
        asyncio.run(broke.complete(make_request("task 9")))
    assert api.hits["openai"] == 2


def test_token_budget(api: FakeAPI) -> None:
    api.script([Answer("x", input_tokens=10, output_tokens=4)] * 3)
    model = load_model("openai:gpt-4o", base_url=api.openai_base_url, api_key=KEY, retry=FAST)
    accounted = AccountedModel(model, budget=Budget(budget_tokens=40))
    asyncio.run(accounted.complete(make_request("a")))  # reserves 17 + 4, spends 14
    with pytest.raises(BudgetExhausted, match="token cap"):
        asyncio.run(accounted.complete(make_request("b" * 200)))  # 83 estimated input tokens
    assert api.hits["openai"] == 1


def test_failed_call_releases_its_reservation(api: FakeAPI) -> None:
    from fake_api import Status

    api.script([Status(400, "bad"), "fine"])
    model = load_model("openai:gpt-4o", base_url=api.openai_base_url, api_key=KEY, retry=FAST)
    budget = Budget(budget_usd=1.0)
    accounted = AccountedModel(model, budget=budget)
    with pytest.raises(EnvportError):
        asyncio.run(accounted.complete(make_request()))
    assert budget.reserved_usd == 0.0 and budget.spent_usd == 0.0


# --- ledger and journal ----------------------------------------------------------------------


def test_ledger_round_trips_and_journal_has_one_line_per_call(api: FakeAPI, tmp_path: Path) -> None:
    api.script([Answer("a", input_tokens=7, output_tokens=2)] * 2)
    model = load_model(
        "anthropic:claude-sonnet-4-6", base_url=api.anthropic_base_url, api_key=KEY, retry=FAST
    )
    journal = tmp_path / "run" / "journal.jsonl"
    accounted = AccountedModel(model, cache_dir=tmp_path / "cache", journal=Journal(journal))
    asyncio.run(accounted.complete(make_request("one")))
    asyncio.run(accounted.complete(make_request("two")))
    asyncio.run(accounted.complete(make_request("one")))

    restored = Ledger.model_validate_json(accounted.ledger.model_dump_json())
    assert restored == accounted.ledger
    assert restored.usage == TokenUsage(input_tokens=14, output_tokens=4)
    dumped = json.loads(accounted.ledger.model_dump_json())
    assert dumped["paid_calls"] == 2 and dumped["cost_usd"] == pytest.approx(2 * 51 / 1e6)

    records = [json.loads(line) for line in journal.read_text().splitlines()]
    assert len(records) == 3
    assert records[0]["purpose"] == {"phase": "repair", "module": "physics", "iteration": 0}
    assert records[0]["model"] == "anthropic:claude-sonnet-4-6"
    assert records[0]["usage"]["input_tokens"] == 7 and records[0]["stop_reason"] == "end"
    assert [r["cached"] for r in records] == [False, False, True]
    assert {"cost_usd", "attempts", "latency_s", "request_key"} <= set(records[0])


def test_budget_sees_through_a_session_recorder(api: FakeAPI, tmp_path: Path) -> None:
    from envport.llm import SessionRecorder

    model = load_model("openai:gpt-4o", base_url=api.openai_base_url, api_key=KEY, retry=FAST)
    recorder = SessionRecorder(model, tmp_path / "session")
    accounted = AccountedModel(recorder, budget=Budget(budget_usd=1e-9))
    with pytest.raises(BudgetExhausted):
        asyncio.run(accounted.complete(make_request()))
    assert api.total_hits == 0
