"""Property: no sequence of model calls takes counted spending past a cap.

Two layers. `Budget` alone: any interleaving of reservations (calls in flight at once),
settlements at or under the reservation and releases keeps spent + reserved under each
cap, and refuses exactly the reservation that could pass one, changing nothing when it does.
Then the whole accounting stack over the real SDKs and a local fake server: calls whose
answers report sound usage, more output than max_tokens, malformed usage fields (negative,
fractional, text, absurd), bodies that are not JSON and server errors. At every moment the
server is hit, the call is covered by a reservation within the cap (refusals happen before
the call); at the end the ledger and the budget agree, every call is counted at most at
its worst case, and spending is within the caps.
"""

from __future__ import annotations

import asyncio
import math
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from envport.errors import EnvportError
from envport.llm import (
    AccountedModel,
    Budget,
    BudgetExhausted,
    Message,
    ModelRequest,
    Price,
    PriceTable,
    Purpose,
    RetryPolicy,
    estimate_input_tokens,
    load_model,
)
from envport.llm.budget import Reservation
from envport.verifiers.draws.hypo import keep_caches_out_of_cwd

from fake_api import Answer, FakeAPI, Malformed, Mangled, ServerError, Status

# Hypothesis's own caches go under envport's cache, as in a verify run, not ./.hypothesis.
keep_caches_out_of_cwd()

# Float sums in a different order differ in the last bits; a cap is dollars, not ulps.
SLACK = 1e-12
FAST = RetryPolicy(attempts=3, initial_wait=0.001, max_wait=0.002)

usd_caps = st.one_of(st.none(), st.floats(0, 0.05))
token_caps = st.one_of(st.none(), st.integers(0, 5000))


def within(spent: float, cap: float | None) -> bool:
    return cap is None or spent <= cap + SLACK * max(1.0, cap)


# --- Budget alone --------------------------------------------------------------------------

operation = st.one_of(
    st.tuples(st.just("reserve"), st.floats(0, 0.01), st.integers(0, 800), st.just(0.0)),
    st.tuples(st.just("settle"), st.integers(0, 9), st.floats(0, 1), st.floats(0, 1)),
    st.tuples(st.just("release"), st.integers(0, 9), st.just(0.0), st.just(0.0)),
)


@settings(max_examples=400, database=None, derandomize=True, deadline=None)
@given(
    max_usd=usd_caps,
    max_tokens=token_caps,
    spent_share=st.floats(0, 1.5),
    operations=st.lists(operation, max_size=30),
)
def test_reservations_and_settlements_never_pass_a_cap(
    max_usd: float | None,
    max_tokens: int | None,
    spent_share: float,
    operations: list[tuple[str, Any, Any, Any]],
) -> None:
    # A resumed run starts with what it spent before, possibly already at or over the cap.
    spent_usd = spent_share * (max_usd or 0.0)
    spent_tokens = math.floor(spent_share * (max_tokens or 0))
    budget = Budget(max_usd, max_tokens, spent_usd=spent_usd, spent_tokens=spent_tokens)
    held = []
    for kind, first, second, third in operations:
        if kind == "reserve":
            wanted = Reservation(usd=first, tokens=second)
            committed_usd = budget.spent_usd + budget.reserved_usd
            committed_tokens = budget.spent_tokens + budget.reserved_tokens
            could_pass = (max_usd is not None and committed_usd + first > max_usd) or (
                max_tokens is not None and committed_tokens + second > max_tokens
            )
            before = vars(budget).copy()
            try:
                held.append(budget.reserve(wanted, "call"))
            except BudgetExhausted as refusal:
                assert could_pass, "refused a call that fits"
                assert "budget exhausted" in str(refusal) and refusal.status == "budget_exhausted"
                assert {k: v for k, v in vars(budget).items() if k != "_lock"} == {
                    k: v for k, v in before.items() if k != "_lock"
                }
            else:
                assert not could_pass, "reserved a call that could pass the cap"
        elif held:
            reservation = held.pop(first % len(held))
            if kind == "settle":
                cost = second * reservation.usd
                budget.settle(reservation, cost, math.floor(third * reservation.tokens))
            else:
                budget.release(reservation)
        # Only what was there before the run may sit over the cap; nothing new adds to it.
        committed_usd = budget.spent_usd + budget.reserved_usd
        committed_tokens = budget.spent_tokens + budget.reserved_tokens
        assert within(committed_usd, None if max_usd is None else max(max_usd, spent_usd))
        if max_tokens is not None:
            assert committed_tokens <= max(max_tokens, spent_tokens)
        assert budget.reserved_usd >= 0 and budget.reserved_tokens >= 0
    for reservation in held:
        budget.release(reservation)
    assert budget.reserved_tokens == 0 and budget.reserved_usd <= SLACK


@settings(max_examples=40, database=None, derandomize=True, deadline=None)
@given(
    max_usd=st.floats(0, 0.01),
    costs=st.lists(st.floats(1e-6, 0.003), min_size=1, max_size=6),
    threads=st.integers(2, 6),
)
def test_calls_from_many_threads_never_pass_the_cap(
    max_usd: float, costs: list[float], threads: int
) -> None:
    """A batch shares one Budget between runs: the check and the hold are one step."""
    budget = Budget(max_usd)
    start = threading.Barrier(threads)

    def spend() -> None:
        start.wait()
        for cost in costs * 3:
            try:
                held = budget.reserve(Reservation(usd=cost, tokens=0), "call")
            except BudgetExhausted:
                continue
            assert within(budget.spent_usd + budget.reserved_usd, max_usd)
            budget.settle(held, cost, 0)

    workers = [threading.Thread(target=spend) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert within(budget.spent_usd, max_usd) and budget.reserved_usd <= SLACK


# --- the accounting stack over the real SDKs ----------------------------------------------


@pytest.fixture(scope="module")
def api() -> Iterator[FakeAPI]:
    with FakeAPI() as server:
        yield server


prices = st.builds(
    Price,
    input=st.floats(0, 50),
    output=st.floats(0, 500),
    cache_read=st.one_of(st.none(), st.floats(0, 100)),
    cache_write=st.one_of(st.none(), st.floats(0, 100)),
)
BAD_COUNTS = [-1, 2.5, "7", True, 10**12, 1e300, [], {"n": 1}]


@st.composite
def server_answer(draw: st.DrawFn, flavour: str, estimate: int, max_tokens: int) -> Any:
    """One thing the server does. Sound usage reports at most the input the budget
    estimated (the estimate is the contract: 3 characters a token errs high)."""
    kind = draw(st.sampled_from(["sound", "sound", "sound", "over", "mangled", "junk", "500"]))
    if kind == "500":
        return ServerError(500)
    if kind == "junk":
        return Malformed()
    read = draw(st.integers(0, estimate))
    written = draw(st.integers(0, estimate - read)) if flavour == "anthropic" else 0
    fresh = draw(st.integers(0, estimate - read - written))
    output = draw(st.integers(0, max_tokens))
    if kind == "over":
        output = max_tokens + draw(st.integers(1, 10**6))
    answer = Answer(
        "answer",
        input_tokens=fresh,
        output_tokens=output,
        cache_read_tokens=read,
        cache_write_tokens=written,
    )
    if kind != "mangled":
        return answer
    fields = (
        ["usage.input_tokens", "usage.output_tokens", "usage.cache_read_input_tokens"]
        if flavour == "anthropic"
        else ["usage.prompt_tokens", "usage.completion_tokens"]
    )
    return Mangled(answer, {draw(st.sampled_from(fields)): draw(st.sampled_from(BAD_COUNTS))})


@st.composite
def sessions(draw: st.DrawFn) -> dict[str, Any]:
    flavour = draw(st.sampled_from(["openai", "anthropic"]))
    max_tokens = draw(st.integers(1, 64))
    request = ModelRequest(
        messages=[Message(role="user", text="x" * draw(st.integers(0, 300)))],
        max_tokens=max_tokens,
        purpose=Purpose(phase="repair", module="physics"),
    )
    estimate = estimate_input_tokens(request)
    answers = draw(st.lists(server_answer(flavour, estimate, max_tokens), min_size=1, max_size=12))
    price = draw(prices)
    # Caps of a few calls' worst cases: some calls fit, and the cap is reached.
    calls_that_fit = st.floats(0, 8)
    worst_tokens = estimate + max_tokens
    return {
        "flavour": flavour,
        "request": request,
        "answers": answers,
        "price": price,
        "max_usd": price.worst_case(estimate, max_tokens) * draw(calls_that_fit),
        "max_tokens": draw(
            st.one_of(st.none(), calls_that_fit.map(lambda n: int(n * worst_tokens)))
        ),
        "calls": draw(st.integers(1, 6)),
    }


# Cache reads dearer than fresh input and cache writes: a worst case priced at the input and
# cache-write rates only would count a sound answer below what it cost.
DEAR_CACHE_READS = {
    "flavour": "anthropic",
    "request": ModelRequest(
        messages=[Message(role="user", text="x" * 90)],
        max_tokens=4,
        purpose=Purpose(phase="repair", module="physics"),
    ),
    "answers": [Answer("a", input_tokens=0, output_tokens=4, cache_read_tokens=46)],
    "price": Price(input=1.0, output=1.0, cache_read=100.0, cache_write=1.0),
    "max_usd": 0.0001,
    "max_tokens": None,
    "calls": 1,
}


@settings(
    max_examples=60,
    database=None,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@example(session=DEAR_CACHE_READS)
@given(session=sessions())
def test_spending_through_the_accounting_stack_stays_under_the_caps(
    api: FakeAPI, session: dict[str, Any]
) -> None:
    request: ModelRequest = session["request"]
    price: Price = session["price"]
    flavour = session["flavour"]
    queue = list(session["answers"])
    budget = Budget(session["max_usd"], session["max_tokens"])
    uncovered: list[str] = []

    def responder(_flavour: str, _body: dict) -> Any:
        # Runs in the server's thread when the call arrives: it must already be covered.
        committed = budget.spent_usd + budget.reserved_usd
        if budget.reserved_tokens == 0 or not within(committed, budget.budget_usd):
            uncovered.append(f"hit with ${committed} committed, {budget.reserved_tokens} held")
        return queue.pop(0) if queue else Status(400, "no more answers")

    api.responder = responder
    model = load_model(
        f"{flavour}:fake-model",
        base_url=api.base_url(flavour),
        api_key="sk-test-key-0000",
        retry=FAST,
        prices=PriceTable({"fake-model": price}),
    )
    accounted = AccountedModel(model, budget=budget)
    worst_usd = price.worst_case(estimate_input_tokens(request), request.max_tokens)
    worst_tokens = estimate_input_tokens(request) + request.max_tokens

    async def calls() -> None:
        for number in range(session["calls"]):
            call = request.model_copy(update={"purpose": Purpose(phase="repair", iteration=number)})
            try:
                await accounted.complete(call)
            except BudgetExhausted:
                event("a call refused by the budget")
            except EnvportError:
                event("a call failed at the server")

    try:
        asyncio.run(calls())
    finally:
        api.responder = None
    assert not uncovered, uncovered
    assert within(budget.spent_usd, budget.budget_usd)
    if budget.budget_tokens is not None:
        assert budget.spent_tokens <= budget.budget_tokens
    assert budget.reserved_tokens == 0 and budget.reserved_usd <= SLACK
    ledger = accounted.ledger
    assert ledger.cost_usd == pytest.approx(budget.spent_usd, abs=SLACK)
    assert ledger.usage.total == budget.spent_tokens
    event(f"{ledger.paid_calls} answers counted")
    for record in ledger.calls:
        # No answer, sound or refused, counts for more than the call reserved.
        assert record.cost_usd <= worst_usd * (1 + 1e-9) + SLACK, record
        assert record.usage.total <= worst_tokens, record
