"""Recording a live session and answering from it with `replay:<dir>`."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from envport.errors import EnvportError
from envport.llm import (
    AccountedModel,
    Message,
    ModelRequest,
    Purpose,
    RetryPolicy,
    SessionRecorder,
    load_model,
    prompt_sha256,
    read_session,
)

from fake_api import FakeAPI, Truncated

FAST = RetryPolicy(attempts=2, initial_wait=0.001, max_wait=0.01)


def make_request(phase: str, module: str | None, iteration: int, text: str) -> ModelRequest:
    return ModelRequest(
        system="port it",
        stable_prefix="reference source",
        messages=[Message(role="user", text=text)],
        max_tokens=100,
        purpose=Purpose(phase=phase, module=module, iteration=iteration),
    )


REQUESTS = [
    make_request("plan", None, 0, "plan the port"),
    make_request("generate", "physics", 0, "write physics"),
    make_request("repair", "physics", 1, "fix the divergence at step 3"),
]


@pytest.fixture
def api() -> Iterator[FakeAPI]:
    with FakeAPI() as server:
        yield server


@pytest.fixture
def session(api: FakeAPI, tmp_path: Path) -> Path:
    """A session recorded from the openai provider through the fake API."""
    directory = tmp_path / "session"
    api.script(["the plan", "def physics(): ...", Truncated("def physics(): return")])
    live = load_model("openai:gpt-4o", base_url=api.openai_base_url, api_key="k", retry=FAST)
    recorder = SessionRecorder(live, directory)
    for request in REQUESTS:
        asyncio.run(recorder.complete(request))
    return directory


def test_recorded_session_replays_without_the_server(api: FakeAPI, session: Path) -> None:
    files = sorted(p.name for p in session.iterdir())
    assert files == [
        "000-generate-physics.md",
        "000-plan.md",
        "001-repair-physics.md",
        "session.json",
    ]
    entries = read_session(session).entries
    assert {e.source for e in entries} == {"recorded"}
    assert entries[0].prompt_sha256 == prompt_sha256(REQUESTS[0])
    assert entries[2].stop_reason == "max_tokens" and entries[0].model == "openai:gpt-4o"

    hits = api.total_hits
    replay = AccountedModel(load_model(f"replay:{session}"))
    answers = [asyncio.run(replay.complete(r)) for r in REQUESTS]
    assert [a.text for a in answers] == ["the plan", "def physics(): ...", "def physics(): return"]
    assert answers[2].truncated
    assert api.total_hits == hits
    assert replay.ledger.cost_usd == 0.0 and replay.ledger.paid_calls == 3


def test_changed_prompt_warns_and_still_answers(session: Path, caplog) -> None:
    model = load_model(f"replay:{session}")
    changed = make_request("generate", "physics", 0, "write physics, vectorised")
    with caplog.at_level(logging.WARNING, logger="envport.llm"):
        answer = asyncio.run(model.complete(changed))
    assert answer.text == "def physics(): ..."
    assert any("differs from the recorded one" in r.getMessage() for r in caplog.records)

    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="envport.llm"):
        asyncio.run(model.complete(REQUESTS[1]))
    assert not caplog.records


def test_missing_answer_is_a_clear_error(session: Path) -> None:
    model = load_model(f"replay:{session}")
    with pytest.raises(EnvportError) as caught:
        asyncio.run(model.complete(make_request("repair", "physics", 2, "again")))
    message = str(caught.value)
    assert "has no answer for phase=repair module=physics iteration=2" in message
    assert caught.value.exit_code == 2


def test_hand_written_entries_are_labelled_as_such(tmp_path: Path) -> None:
    (tmp_path / "answer.md").write_text("def step(): pass\n")
    (tmp_path / "session.json").write_text(
        json.dumps(
            {
                "format": "envport-replay/1",
                "entries": [{"phase": "generate", "module": "step", "answer_file": "answer.md"}],
            }
        )
    )
    (entry,) = read_session(tmp_path).entries
    assert entry.source == "hand-written" and entry.iteration == 0
    model = load_model(f"replay:{tmp_path}")
    answer = asyncio.run(model.complete(make_request("generate", "step", 0, "anything")))
    assert answer.text == "def step(): pass\n" and answer.stop_reason == "end"


@pytest.mark.parametrize(
    ("session_json", "message"),
    [
        (None, "has no session.json"),
        ("{not json", "is invalid"),
        (
            json.dumps(
                {
                    "entries": [
                        {"phase": "p", "answer_file": "a.md"},
                        {"phase": "p", "answer_file": "b.md"},
                    ]
                }
            ),
            "two entries for phase=p module=- iteration=0",
        ),
    ],
)
def test_bad_session_is_one_clear_line(
    tmp_path: Path, session_json: str | None, message: str
) -> None:
    if session_json is not None:
        (tmp_path / "session.json").write_text(session_json)
    with pytest.raises(EnvportError, match=message) as caught:
        load_model(f"replay:{tmp_path}")
    assert "\n" not in str(caught.value)


def test_missing_answer_file(tmp_path: Path) -> None:
    entries = [{"phase": "p", "answer_file": "gone.md", "source": "recorded"}]
    (tmp_path / "session.json").write_text(json.dumps({"entries": entries}))
    with pytest.raises(EnvportError, match=r"answer file gone\.md"):
        asyncio.run(load_model(f"replay:{tmp_path}").complete(make_request("p", None, 0, "x")))
