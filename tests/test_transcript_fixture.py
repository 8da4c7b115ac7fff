"""Transcripts written before the typed events still review and report with the same
figures, and a transcript line this envport cannot read is an error naming the line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from transcript_fixture import EXPECTED, RUNS, copy_run, outputs

from envport.errors import EnvportError
from envport.review.timeline import read_timeline
from envport.runs.events import TranscriptError, read_events
from envport.runs.journal import Journal, Spending

REVERT, STUCK = RUNS  # made 20:40 and 20:41: see tests/fixtures/run_v1/README.md


@pytest.mark.parametrize("name", RUNS)
def test_old_runs_review_and_report_as_they_did(name: str, tmp_path: Path) -> None:
    shown = outputs(copy_run(name, tmp_path))
    recorded = {p.name: p.read_text(encoding="utf-8") for p in (EXPECTED / name).iterdir()}
    assert sorted(shown) == sorted(recorded)
    for file, text in recorded.items():
        assert shown[file] == text, f"{name}/{file} differs from what the old code showed"


def test_the_figures_of_the_old_runs() -> None:
    """The sums themselves, so a change that zeroes them cannot pass by recording anew."""
    path = _transcript(REVERT)
    timeline = read_timeline(path)
    assert [it.decision for it in timeline.iterations] == [
        "accept", "repair", "revert", "accept", ""
    ]  # fmt: skip
    assert [it.usage.total for it in timeline.iterations] == [15942, 8132, 9231, 9200, 0]
    assert timeline.usage.total == 42505 and round(timeline.cost_usd, 4) == 0.1228
    spending = Spending.from_journal(path)
    assert (spending.paid_calls, spending.cached_calls) == (5, 0)
    assert spending.usage == timeline.usage and spending.cost_usd == timeline.cost_usd
    state = json.loads((path.parent / "run.json").read_text())
    assert state["usage"] == spending.usage.model_dump()
    assert state["cost_usd"] == round(spending.cost_usd, 6)


def _transcript(name: str) -> Path:
    return Path(__file__).parent / "fixtures" / "run_v1" / name / "transcript.jsonl"


def _broken(tmp_path: Path, change: dict[str, object], drop: str = "") -> Path:
    """The stuck run's transcript with its first model_call line changed."""
    lines = _transcript(STUCK).read_text(encoding="utf-8").splitlines()
    index = next(i for i, line in enumerate(lines) if '"event": "model_call"' in line)
    record = json.loads(lines[index])
    record.update(change)
    record.pop(drop, None)
    lines[index] = json.dumps(record)
    path = tmp_path / "transcript.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _line_of_first_call() -> int:
    lines = _transcript(STUCK).read_text(encoding="utf-8").splitlines()
    return 1 + next(i for i, line in enumerate(lines) if '"event": "model_call"' in line)


@pytest.mark.parametrize(
    ("change", "drop", "complaint"),
    [
        ({"event": "model_answer"}, "", "unknown event kind 'model_answer'"),
        ({"cost_usd": "a lot"}, "", "'model_call' event this envport cannot read: cost_usd"),
        ({"usage": {"input_tokens": "many"}}, "", "usage.input_tokens"),
        # A renamed field: the old name is unknown and the new one missing, never a zero.
        ({"cost": 0.02}, "cost_usd", "cost_usd: Field required"),
    ],
)
def test_a_line_it_cannot_read_is_an_error_naming_the_line(
    tmp_path: Path, change: dict[str, object], drop: str, complaint: str
) -> None:
    path = _broken(tmp_path, change, drop)
    with pytest.raises(TranscriptError) as caught:
        Spending.from_journal(path)
    message = str(caught.value)
    assert isinstance(caught.value, EnvportError)  # the CLI prints it as one line, exit 2
    assert message.startswith(f"{path}:{_line_of_first_call()}: ") and complaint in message
    with pytest.raises(TranscriptError):
        read_timeline(path)


def test_the_writer_refuses_an_event_it_would_not_read_back(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "transcript.jsonl")
    with pytest.raises(ValueError, match="decision"):
        journal.write("decision", step=1, decision="maybe")
    with pytest.raises(ValueError, match="sha"):
        journal.write("commit", step=1, shaa="abc", message="m")
    journal.write("commit", step=1, sha="abc", message="m")
    (event,) = read_events(journal.path)
    assert event.event == "commit" and event.sha == "abc"
