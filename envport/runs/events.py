"""The events of transcript.jsonl, one pydantic model per kind, and their one writer.

Every line of a transcript is one `Event`: a JSON object whose `event` field names its kind
(a `Literal` that selects the model). `append_event` is the only code that writes a line;
`read_events` is the only code that reads them back, through a `TypeAdapter` of the union.
Models forbid unknown fields and give defaults only to fields a writer may leave out, so a
renamed or mistyped field is an error naming the file and line, never a figure read as zero.

A record is one write of one line, so a kill leaves whole records and at most one torn line
(the last one, or one that a resume appended to): a line that is not JSON is skipped. A
line that is JSON but not a known event is a `TranscriptError`.

Event kinds (each with `at`; those of the driver also with `step`):
  run_started / resumed     who, what, which model; resumed carries the step it resumes at
  context                   the stable prompt prefix (instructions, reference source), by sha256
  prompt                    a rendered request: purpose, system, prefix sha256, messages
  model_call                written by AccountedModel: purpose, usage, cost, cached, request key
  model_error / budget_exhausted   a call that brought no answer, with its one-line reason
  answer                    the model's text, stop reason, whether it came from the cache
  parse_error               why an answer was unusable (followed by one re-ask)
  edit                      one file written into the port, with its unified diff
  proposed_test             a test the model proposed, saved under proposed_tests/
  check                     a verifier run: scope, each check's pass/fail and divergences
  decision                  what the driver does next and why (accept, revert, stuck, ...)
  optimize_bench            `--optimize`: SPS of the verified port by batch size, every run
  optimize_attempt          one optimisation round: kept or reverted and why, SPS before and
                            after by batch size, the ratio at the largest batch, every timed run
  commit                    the git commit of the step
  event_loop_lag            the driver's event-loop lag over the session
  finished / interrupted / stopped    how the session ended
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from envport.errors import EnvportError
from envport.llm.ledger import CallRecord
from envport.llm.types import Message, Purpose
from envport.runs.state import CheckOutcome
from envport.spec import ModuleSpec


class TranscriptError(EnvportError):
    """A transcript line that is JSON but no event this envport knows."""


class _Event(BaseModel):
    model_config = ConfigDict(extra="forbid")

    at: datetime


class _StepEvent(_Event):
    step: int


class _SessionEvent(_StepEvent):
    run_id: str
    spec: str
    target: str
    model: str
    phase: str
    scope: str
    iteration: int


class RunStartedEvent(_SessionEvent):
    event: Literal["run_started"] = "run_started"


class ResumedEvent(_SessionEvent):
    event: Literal["resumed"] = "resumed"


class ContextEvent(_StepEvent):
    event: Literal["context"] = "context"
    sha256: str
    text: str


class PromptEvent(_StepEvent):
    event: Literal["prompt"] = "prompt"
    purpose: Purpose
    system: str
    stable_prefix_sha256: str
    messages: list[Message]
    max_tokens: int


class ModelCallEvent(CallRecord):
    """One answered call (or one answer refused as malformed), as the ledger holds it. No
    step: the model layer does not know it; it belongs to the prompt just before it."""

    model_config = ConfigDict(extra="forbid")

    event: Literal["model_call"] = "model_call"
    at: datetime  # stamped by the ledger when the call was made; required to read one back


class _CallFailedEvent(_Event):
    purpose: Purpose
    model: str
    message: str


class ModelErrorEvent(_CallFailedEvent):
    event: Literal["model_error"] = "model_error"


class BudgetExhaustedEvent(_CallFailedEvent):
    event: Literal["budget_exhausted"] = "budget_exhausted"


class AnswerEvent(_StepEvent):
    event: Literal["answer"] = "answer"
    purpose: Purpose
    text: str
    stop_reason: str
    cached: bool
    model: str


class ParseErrorEvent(_StepEvent):
    event: Literal["parse_error"] = "parse_error"
    purpose: Purpose
    error: str


class EditEvent(_StepEvent):
    event: Literal["edit"] = "edit"
    path: str
    created: bool
    diff: str


class ProposedTestEvent(_StepEvent):
    event: Literal["proposed_test"] = "proposed_test"
    path: str
    proposed_as: str


class CheckEvent(_StepEvent):
    event: Literal["check"] = "check"
    scope: str
    passed: bool
    outcomes: list[CheckOutcome]
    # The verifier's LevelResult dumps. Kept as data here: the verifier is a higher layer
    # than the run store, and the report validates them itself (an unreadable level is
    # shown as such, not dropped).
    levels: list[dict[str, Any]]
    seconds: float
    cached: bool
    # The verifier's BranchCoverage dump (None: not measured, or a run from before it was).
    coverage: dict[str, Any] | None = None


Decision = Literal[
    "plan",
    "accept",
    "repair",
    "unusable_answer",
    "revert",
    "add_context",
    "stuck",
    "optimize",
    "keep",
]


class DecisionEvent(_StepEvent):
    event: Literal["decision"] = "decision"
    decision: Decision
    # Which of these a decision carries depends on the decision: none is a figure.
    why: str = ""
    broke: list[str] = Field(default_factory=list)  # revert: the checks the edit broke
    signature: str = ""  # stuck: the divergence that did not move
    modules: list[ModuleSpec] | None = None  # plan: the modules proposed, in order
    entry: str | None = None  # plan: the entry module


class OptimizeBenchEvent(_StepEvent):
    event: Literal["optimize_bench"] = "optimize_bench"
    batch_sizes: list[int]
    steps: int
    repeats: int
    sps: dict[int, float]
    runs: dict[int, list[float]]
    loops: dict[int, str]
    error: str | None
    seconds: float
    cached: bool


class OptimizeAttemptEvent(_StepEvent):
    event: Literal["optimize_attempt"] = "optimize_attempt"
    round: int
    kept: bool
    why: str
    batch: int
    sps_before: dict[int, float]
    sps_after: dict[int, float]
    ratio: float | None
    min_ratio: float
    runs_before: dict[int, list[float]]
    runs_after: dict[int, list[float]]
    bench_error: str | None
    bench_seconds: float
    cached: bool


class CommitEvent(_StepEvent):
    event: Literal["commit"] = "commit"
    sha: str
    message: str


class EventLoopLagEvent(_Event):
    event: Literal["event_loop_lag"] = "event_loop_lag"
    samples: int
    min_ms: float
    mean_ms: float
    p50_ms: float
    p90_ms: float
    p99_ms: float
    max_ms: float


class FinishedEvent(_StepEvent):
    event: Literal["finished"] = "finished"
    status: Literal["verified", "gave_up"]
    reason: str = ""  # verified runs end without one


class InterruptedEvent(_StepEvent):
    event: Literal["interrupted"] = "interrupted"
    reason: str


class StoppedEvent(_StepEvent):
    event: Literal["stopped"] = "stopped"
    reason: str


Event = Annotated[
    RunStartedEvent
    | ResumedEvent
    | ContextEvent
    | PromptEvent
    | ModelCallEvent
    | ModelErrorEvent
    | BudgetExhaustedEvent
    | AnswerEvent
    | ParseErrorEvent
    | EditEvent
    | ProposedTestEvent
    | CheckEvent
    | DecisionEvent
    | OptimizeBenchEvent
    | OptimizeAttemptEvent
    | CommitEvent
    | EventLoopLagEvent
    | FinishedEvent
    | InterruptedEvent
    | StoppedEvent,
    Field(discriminator="event"),
]
EVENT: TypeAdapter[Event] = TypeAdapter(Event)

# Events that describe the run as a whole, not one of its steps.
RunEvent = RunStartedEvent | ResumedEvent | FinishedEvent | InterruptedEvent | StoppedEvent
RUN_EVENTS = (RunStartedEvent, ResumedEvent, FinishedEvent, InterruptedEvent, StoppedEvent)
# Events that make a step an iteration of its own; a step with only a decision (the driver
# journals "stuck" after the step counter moved on) belongs to the iteration before it, and
# the run's own events (a finish journaled at the next step) to none.
ITERATION_EVENTS = (
    PromptEvent,
    AnswerEvent,
    EditEvent,
    CheckEvent,
    ParseErrorEvent,
    OptimizeBenchEvent,
    OptimizeAttemptEvent,
)


def iteration_range(events: list[Event]) -> str:
    """The run's iterations as every view names them in an error (`0..3`, or `none yet`):
    `review --iteration K` and `--port RUN@K` take the same K."""
    steps = sorted({e.step for e in events if isinstance(e, ITERATION_EVENTS)})
    return f"{steps[0]}..{steps[-1]}" if steps else "none yet"


def step_of(event: Event) -> int | None:
    """The driver's step an event was written in; None for the model layer's events."""
    return event.step if isinstance(event, _StepEvent) else None


def make_event(kind: str, **fields: Any) -> Event:
    """A validated event of `kind`: a field that is missing, unknown or of the wrong type
    is a ValidationError here, in the writer, before anything reaches the file."""
    return EVENT.validate_python({"event": kind, **fields})


def append_event(path: Path, event: Event) -> None:
    """The one writer of transcript lines: one write of one line."""
    line = EVENT.dump_json(event).decode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(line + "\n")


def _problem(error: ValidationError) -> str:
    first = error.errors()[0]
    # The location starts with the event kind (the union's tag): the message names it.
    where = ".".join(str(part) for part in first["loc"][1:])
    return f"{where}: {first['msg']}" if where else first["msg"]


def parse_event(line: str, where: str) -> Event | None:
    """One line as an event; None for a torn line. `where` (path:line) names it in errors."""
    try:
        record = json.loads(line)
    except ValueError:
        return None
    if not isinstance(record, dict):
        raise TranscriptError(f"{where}: not a transcript event (a JSON {type(record).__name__})")
    try:
        return EVENT.validate_python(record)
    except ValidationError as error:
        kind = record.get("event")
        if error.errors()[0]["type"] in ("union_tag_invalid", "union_tag_not_found"):
            raise TranscriptError(f"{where}: unknown event kind {kind!r}") from None
        named = f"a {kind!r} event" if isinstance(kind, str) else "an event"
        problem = _problem(error)
        raise TranscriptError(f"{where}: {named} this envport cannot read: {problem}") from None


def read_events(path: Path) -> Iterator[Event]:
    """Every whole event of a transcript, in order; a torn line (from a kill) is skipped."""
    if not path.is_file():
        return
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            event = parse_event(line, f"{path}:{number}")
            if event is not None:
                yield event
