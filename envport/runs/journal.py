"""transcript.jsonl: the append-only journal of a run, one event a line.

The events and their one writer and reader are in envport.runs.events. `Journal` is how the
driver and the model layer (as its `CallJournal`) append to a run's transcript; `Spending`
is what a run's model calls cost so far, read back from it. A step interrupted and run again
after a resume appears twice; the later copy is the one that counted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from envport.llm.ledger import CallRecord, CallTotals, utc_now
from envport.llm.types import Purpose
from envport.runs.events import (
    BudgetExhaustedEvent,
    Event,
    ModelCallEvent,
    ModelErrorEvent,
    append_event,
    make_event,
    read_events,
)

__all__ = ["Journal", "Spending", "read_events"]


class Journal:
    def __init__(self, path: Path) -> None:
        self.path = path

    def write(self, event: str, **fields: Any) -> None:
        """Append an event of kind `event`, stamped now; its fields are validated first."""
        self.append(make_event(event, at=utc_now(), **fields))

    def append(self, event: Event) -> None:
        append_event(self.path, event)

    # --- envport.llm.ledger.CallJournal: what AccountedModel reports -----------------------

    def model_call(self, call: CallRecord) -> None:
        self.append(ModelCallEvent.model_validate(call.model_dump()))

    def call_failed(
        self,
        kind: Literal["model_error", "budget_exhausted"],
        purpose: Purpose,
        model: str,
        message: str,
    ) -> None:
        cls = ModelErrorEvent if kind == "model_error" else BudgetExhaustedEvent
        self.append(cls(at=utc_now(), purpose=purpose, model=model, message=message))


class Spending(CallTotals):
    """What a run's model calls cost so far, summed from the journal's model_call events.

    The journal, not run.json, is the ledger of record: a call answered just before a kill is
    journaled at once, while run.json is only written when the step completes.
    """

    @classmethod
    def from_journal(cls, path: Path) -> Spending:
        spending = cls()
        for event in read_events(path):
            if isinstance(event, ModelCallEvent):
                spending.add(event)
        return spending

    def add(self, call: CallRecord | dict[str, Any]) -> None:
        """Count one more call (a CallRecord, or one dumped as the driver passes it)."""
        record = call if isinstance(call, CallRecord) else CallRecord.model_validate(call)
        super().add(record)
