"""Prompt caching and cheaper repairs, through the real SDKs against the local fake API.

A translate run keeps the cacheable prefix of its requests (the system prompt and the
stable prefix at the head of the first user turn) byte-identical from call to call, which is
what OpenAI's automatic caching needs; the Anthropic request marks the prefix with
`cache_control`. Cache reads and writes the server reports are counted apart, priced at
their own rates, journaled, and shown by review. The run's repair answers with a
search/replace edit, which is applied.

Model answers scripted below are hand-written for these tests (SCRIPTED_*), built from the
labelled replay session examples/cartpole/replay/numpy.
"""

from __future__ import annotations

import asyncio
import json
import tomllib
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from envport.llm import Message, ModelRequest, Purpose, RetryPolicy, load_model, load_prices
from envport.pipeline.prompting import PromptBuilder, target_info
from envport.pipeline.sources.reading import read_sources
from envport.prompts.render import Prompts
from envport.runs.state import RunState
from envport.spec import load_spec

from fake_api import Answer, FakeAPI
from helpers import CARTPOLE
from run_fixtures import ENV_BUGGY, PHYSICS, clean_env, envport, fast_spec

# The session's repair, as one search/replace edit instead of the whole env.py.
SCRIPTED_EDIT_REPAIR = """The terminating step earns 1.0 in the reference.

### Edit: env.py
```python
<<<<<<< SEARCH
        reward = np.where(terminated, 0.0, 1.0)
=======
        # The terminating step still earns 1.0, as in the reference.
        reward = np.ones(self.num_envs)
>>>>>>> REPLACE
```
"""
# Its first try quotes the line without its indentation: found 0 times, so re-asked.
SCRIPTED_EDIT_MISQUOTED = SCRIPTED_EDIT_REPAIR.replace("SEARCH\n        reward", "SEARCH\nreward")
PRICES = '[models."fake-model"]\ninput = 2.0\noutput = 8.0\ncache_read = 0.5\ncache_write = 2.0\n'
CACHED = 1500  # prompt tokens the fake server reports as read from its cache
FAST = RetryPolicy(attempts=2, initial_wait=0.001, max_wait=0.01)


@pytest.fixture
def api() -> Iterator[FakeAPI]:
    with FakeAPI() as server:
        yield server


def events(run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / "transcript.jsonl").read_text().splitlines()]


@pytest.mark.slow
def test_a_run_keeps_its_prefix_byte_identical_and_counts_cache_reads(
    tmp_path: Path, api: FakeAPI
) -> None:
    api.script(
        [
            Answer(PHYSICS, input_tokens=400),  # the first call writes the cache
            Answer(ENV_BUGGY, input_tokens=500, cache_read_tokens=CACHED),
            Answer(SCRIPTED_EDIT_MISQUOTED, input_tokens=700, cache_read_tokens=CACHED),
            Answer(SCRIPTED_EDIT_REPAIR, input_tokens=900, cache_read_tokens=CACHED),
        ]
    )
    prices = tmp_path / "prices.toml"
    prices.write_text(PRICES)
    spec = fast_spec(tmp_path / "cartpole")
    out = tmp_path / "runs"
    result = envport(
        *("translate", str(spec), "--target", "numpy", "--model", "openai:fake-model"),
        *("--base-url", api.openai_base_url, "--out", str(out)),
        env=clean_env(ENVPORT_PRICES=str(prices)),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert api.pending == 0 and api.hits["openai"] == 4
    assert f"({3 * CACHED:,} read from the prompt cache)" in result.stdout
    (run,) = [p for p in out.iterdir() if p.is_dir()]
    records = events(run)

    # Every request begins with the same bytes: the system message, then the stable prefix
    # (the run's context) at the head of the first user turn. Only what follows differs.
    (context,) = [e["text"] for e in records if e["event"] == "context"]
    bodies = [request.body for request in api.requests]
    systems = {json.dumps(body["messages"][0], sort_keys=True) for body in bodies}
    assert len(systems) == 1 and bodies[0]["messages"][0]["role"] == "system"
    firsts = [body["messages"][1]["content"] for body in bodies]
    assert all(first.startswith(context + "\n\n") for first in firsts)
    assert len({first[len(context) :] for first in firsts}) == 3  # the tasks differ
    assert "### Edit: <path>" in firsts[2] and "### Edit:" not in firsts[0]  # repairs only

    # The misquoted edit was re-asked, quoting which edit, which file, why, and where.
    reask = bodies[3]["messages"]
    assert reask[-2] == {"role": "assistant", "content": SCRIPTED_EDIT_MISQUOTED}
    told = reask[-1]["content"]
    assert "edit 1 (`env.py`): its SEARCH lines occur 0 times in `env.py`" in told
    assert "|         reward = np.where(terminated, 0.0, 1.0)" in told  # the nearest line
    assert "SEARCH/REPLACE blocks" in told
    errors = [e["error"] for e in records if e["event"] == "parse_error"]
    assert len(errors) == 1 and "the port is unchanged" in errors[0]

    # Cache reads counted apart from fresh input and priced at their own rate.
    calls = [e for e in records if e["event"] == "model_call"]
    reads = [c["usage"]["cache_read_tokens"] for c in calls]
    assert reads == [0, CACHED, CACHED, CACHED]
    for call in calls:
        usage = call["usage"]
        expected = (
            usage["input_tokens"] * 2.0
            + usage["output_tokens"] * 8.0
            + usage["cache_read_tokens"] * 0.5
        ) / 1e6
        assert call["cost_usd"] == pytest.approx(expected)
    assert calls[1]["usage"]["input_tokens"] == 500  # prompt_tokens less the cached ones

    # The repair's edit was applied: the reward line changed, nothing else in env.py.
    edits = [e for e in records if e["event"] == "edit"]
    assert [e["path"] for e in edits] == ["physics.py", "env.py", "env.py"]
    diff = edits[2]["diff"]
    assert "-        reward = np.where(terminated, 0.0, 1.0)" in diff
    assert "+        reward = np.ones(self.num_envs)" in diff
    assert sum(1 for line in diff.splitlines() if line.startswith(("+", "-"))) == 2 + 3
    assert records[-1]["event"] == "finished" and records[-1]["status"] == "verified"

    shown = envport("review", str(run), env=clean_env())
    assert shown.returncode == 0, shown.stderr
    assert f"{3 * CACHED:,} read from the prompt cache" in shown.stdout
    report = (run / "reports" / "report.html").read_text()
    assert f"({3 * CACHED:,} read from the prompt cache)</div>" in report


def request(task: str) -> ModelRequest:
    builder = PromptBuilder(
        Prompts(), load_spec(CARTPOLE), read_sources(load_spec(CARTPOLE)), target_info("jax")
    )
    spec = load_spec(CARTPOLE)
    state = RunState(
        run_id="r",
        spec_source="s",
        spec_name="cartpole",
        target="jax",
        model="anthropic:claude-sonnet-4-6",
        modules=spec.target("jax").modules,
        entry=spec.target("jax").entry,
    )
    return ModelRequest(
        system=builder.system(),
        stable_prefix=builder.context(state),
        messages=[Message(role="user", text=task)],
        max_tokens=512,
        purpose=Purpose(phase="repair", iteration=1),
    )


def test_anthropic_marks_the_same_prefix_on_consecutive_calls_and_prices_cache_tokens(
    api: FakeAPI,
) -> None:
    api.script(
        [
            Answer("first", input_tokens=30, output_tokens=10, cache_write_tokens=4000),
            Answer("second", input_tokens=40, output_tokens=10, cache_read_tokens=4000),
        ]
    )
    model = load_model(
        "anthropic:claude-sonnet-4-6",
        base_url=api.anthropic_base_url,
        api_key="sk-test",
        retry=FAST,
        prices=load_prices(),
    )
    first = asyncio.run(model.complete(request("generate physics.py")))
    second = asyncio.run(model.complete(request("repair env.py")))

    blocks = [body["messages"][0]["content"] for body in (r.body for r in api.requests)]
    assert blocks[0][0] == blocks[1][0]  # the cached block, byte for byte
    assert blocks[0][0]["cache_control"] == {"type": "ephemeral"}
    assert blocks[0][0]["text"].startswith("# Port `cartpole`")
    assert [b[1]["text"] for b in blocks] == ["generate physics.py", "repair env.py"]
    assert "cache_control" not in blocks[0][1]
    assert api.requests[0].body["system"] == api.requests[1].body["system"]

    # claude-sonnet-4 per million: $3 in, $15 out, $0.30 cache read, $3.75 cache write.
    assert (first.usage.cache_write_tokens, second.usage.cache_read_tokens) == (4000, 4000)
    assert first.cost_usd == pytest.approx((30 * 3 + 10 * 15 + 4000 * 3.75) / 1e6)
    assert second.cost_usd == pytest.approx((40 * 3 + 10 * 15 + 4000 * 0.3) / 1e6)
    assert second.usage.described() == "4,050 tokens (4,000 read from the prompt cache)"


def test_the_stable_prefix_does_not_change_with_the_step() -> None:
    """What varies within a run (step, phase, iteration, notes, failures) stays out of the
    prefix: otherwise no call after the first would find it cached."""
    spec = load_spec(CARTPOLE)
    builder = PromptBuilder(Prompts(), spec, read_sources(spec), target_info("numpy"))
    base = RunState(
        run_id="r",
        spec_source="s",
        spec_name="cartpole",
        target="numpy",
        model="openai:x",
        modules=spec.target("numpy").modules,
        entry=spec.target("numpy").entry,
    )
    later = base.model_copy(
        update={
            "step": 7,
            "phase": "composed",
            "iteration": 3,
            "module_index": 1,
            "notes": ["your last edit was reverted"],
            "history": ["iteration 1: l3.free failed"],
        }
    )
    assert builder.context(base) == builder.context(later)
    assert builder.system() == builder.system()


def test_shipped_cache_prices_follow_the_providers_ratios() -> None:
    text = resources.files("envport.llm").joinpath("prices.toml").read_text(encoding="utf-8")
    prices = load_prices().prices
    assert set(prices) == set(tomllib.loads(text)["models"])
    for prefix, price in prices.items():
        assert price.cache_read is not None and price.cache_write is not None
        if prefix.startswith("claude"):
            # As listed: rounded to the cent (Claude 3 Haiku: $0.03 read, $0.30 write).
            assert price.cache_read == pytest.approx(0.1 * price.input, abs=0.015), prefix
            assert price.cache_write == pytest.approx(1.25 * price.input, abs=0.015), prefix
        else:
            assert price.cache_read <= price.input, prefix
            assert price.cache_write == price.input, prefix  # no write surcharge
