"""API keys never reach a file envport writes: cache, journal, ledger, session, logs, errors."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from envport.llm import (
    AccountedModel,
    Budget,
    Message,
    ModelRequest,
    Purpose,
    RetryPolicy,
    SessionRecorder,
    load_model,
)
from envport.llm.failures import one_line
from envport.runs.journal import Journal

from fake_api import Answer, FakeAPI, RateLimited, ServerError, Status, Unauthorized

SECRET = "sk-test-SECRET-123"
FAST = RetryPolicy(attempts=2, initial_wait=0.001, max_wait=0.01)


def make_request(iteration: int) -> ModelRequest:
    return ModelRequest(
        system="port it",
        stable_prefix="reference source",
        messages=[Message(role="user", text=f"iteration {iteration}")],
        max_tokens=50,
        purpose=Purpose(phase="repair", module="physics", iteration=iteration),
    )


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_no_key_in_any_file_a_run_writes(tmp_path: Path, provider: str) -> None:
    run = tmp_path / "run"
    run.mkdir()
    # Everything logged, by envport and by the SDKs and their HTTP client, goes to a file.
    handler = logging.FileHandler(run / "debug.log")
    handler.setLevel(logging.DEBUG)
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    errors: list[str] = []
    try:
        with FakeAPI() as api:
            api.script(
                [
                    RateLimited(0.001),
                    Answer("first answer", input_tokens=5, output_tokens=5),
                    Answer("second answer", input_tokens=5, output_tokens=5),
                    ServerError(503),
                    ServerError(503),
                    Unauthorized(),  # echoes the key it was sent
                    Status(400, f"key {SECRET} is not allowed to do that"),
                ]
            )
            model = load_model(
                f"{provider}:claude-haiku-4-5" if provider == "anthropic" else f"{provider}:gpt-4o",
                base_url=api.base_url(provider),  # type: ignore[arg-type]
                api_key=SECRET,
                retry=FAST,
            )
            accounted = AccountedModel(
                SessionRecorder(model, run / "session"),
                cache_dir=run / "cache",
                budget=Budget(budget_usd=5.0),
                journal=Journal(run / "transcript.jsonl"),
            )
            for iteration in range(5):
                try:
                    asyncio.run(accounted.complete(make_request(iteration)))
                except Exception as exc:  # what the CLI would print and the report would keep
                    errors.append(f"{type(exc).__name__}: {exc}")
            # The key did travel, so the scan below is not vacuous.
            assert SECRET in str(api.requests[0].headers)
            (run / "ledger.json").write_text(accounted.ledger.model_dump_json(indent=2))
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)
        handler.close()
    (run / "errors.txt").write_text("\n".join(errors))

    assert len(errors) == 3, errors  # 503 twice, 401, 400
    assert "gave up after 2 attempts" in errors[0]
    assert "HTTP 401" in errors[1] and "[REDACTED]" not in errors[1]
    assert "key [REDACTED] is not allowed" in errors[2]
    assert (run / "debug.log").stat().st_size > 0

    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    names = {p.relative_to(run).parts[0] for p in written}
    assert {"cache", "session", "transcript.jsonl", "ledger.json", "debug.log"} <= names
    for path in written:
        data = path.read_bytes()
        assert SECRET.encode() not in data, path
        assert SECRET[-8:].encode() not in data, path  # no masked echo either


def test_redaction_rules() -> None:
    assert one_line(f"bad key\n  {SECRET}!", [SECRET]) == "bad key [REDACTED]!"
    assert one_line("Incorrect key sk-****CRET-123", [SECRET]) == "Incorrect key sk-****[REDACTED]"
    # Placeholders too short to be real keys are not scrubbed out of ordinary words.
    assert one_line("too many tokens", ["k"]) == "too many tokens"
    assert len(one_line("x" * 1000)) == 300
