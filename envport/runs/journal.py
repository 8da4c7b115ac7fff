"""transcript.jsonl: the append-only journal of a run, one JSON object per line.

Events, each with `event`, `at` and (from the driver) `step`:
  run_started / resumed     who, what, which model; resumed carries the step it resumes at
  context                   the stable prompt prefix (instructions, reference source), by sha256
  prompt                    a rendered request: purpose, system, prefix sha256, messages
  model_call                written by AccountedModel: purpose, usage, cost, cached, request key
  answer                    the model's text, stop reason, whether it came from the cache
  parse_error               why an answer was unusable (followed by one re-ask)
  edit                      one file written into the port, with its unified diff
  proposed_test             a test the model proposed, saved under proposed_tests/
  check                     a verifier run: scope, each check's pass/fail and divergences
  decision                  what the driver does next and why (accept, revert, stuck, ...)
  optimize_bench            `--optimize`: SPS of the verified port by batch size, every run
  optimize_attempt          one optimisation round: kept or reverted and why, SPS before and
                            after by batch size (one session), the ratio at the largest batch,
                            every timed run of both versions
  commit                    the git commit of the step
  finished / interrupted / stopped    how the session ended
A record is one write of one line, so a kill leaves whole records and at most one torn last
line, which readers skip. A step interrupted and run again after a resume appears twice; the
later copy is the one that counted.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from envport.llm.ledger import utc_now
from envport.llm.types import TokenUsage


class Journal:
    def __init__(self, path: Path) -> None:
        self.path = path

    def write(self, event: str, **fields: Any) -> None:
        record = {"event": event, "at": utc_now().isoformat(), **fields}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")


def read_events(path: Path) -> Iterator[dict[str, Any]]:
    """Every whole record of a journal; a torn line (from a kill) is skipped."""
    if not path.is_file():
        return
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                yield record


class Spending:
    """What a run's model calls cost so far, summed from the journal's model_call records.

    The journal, not run.json, is the ledger of record: a call answered just before a kill is
    journaled at once, while run.json is only written when the step completes.
    """

    def __init__(self) -> None:
        self.usage = TokenUsage()
        self.cost_usd = 0.0
        self.paid_calls = 0
        self.cached_calls = 0

    @classmethod
    def from_journal(cls, path: Path) -> Spending:
        spending = cls()
        for record in read_events(path):
            if record.get("event") == "model_call":
                spending.add(record)
        return spending

    def add(self, record: dict[str, Any]) -> None:
        if record.get("cached"):
            self.cached_calls += 1
            return
        self.paid_calls += 1
        self.cost_usd += float(record.get("cost_usd") or 0.0)
        self.usage = self.usage + TokenUsage.model_validate(record.get("usage") or {})
