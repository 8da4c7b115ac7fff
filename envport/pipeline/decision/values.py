"""The values `decide` works on: a phase's outcome in, a decision out.

A `Decision` names what was decided, carries the run's next state and the acts that carry
it out, in order; the driver executes the acts (`pipeline/driver.py`) and nothing else.
Outcomes are what a phase saw in its step, reduced to what the rules need.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from envport.pipeline.optimize import Comparison
from envport.pipeline.plan import Plan
from envport.runs.state import CheckOutcome, OptimizeAttempt, RunState

# --- acts: what the driver carries out, in the order given ---------------------------------


@dataclass(frozen=True)
class Commit:
    """Commit the port as it is (the step's attempt)."""

    message: str


@dataclass(frozen=True)
class Revert:
    """Undo the last commit with a commit of its own, so the attempt stays in the history."""

    message: str


@dataclass(frozen=True)
class Record:
    """Journal a `decision` event with these fields (at the step the driver is at then)."""

    fields: dict[str, Any]


@dataclass(frozen=True)
class Note:
    """Tell the person watching."""

    text: str


@dataclass(frozen=True)
class Complete:
    """The step is done: `Decision.state` becomes the run's state (step + 1, saved)."""


@dataclass(frozen=True)
class GiveUp:
    """The run stops with this reason, at the last completed step."""

    reason: str


@dataclass(frozen=True)
class Finish:
    """The completed state is verified: journal the end, write the outcome report."""


@dataclass(frozen=True)
class RecordAttempt:
    """Journal the optimisation round's attempt with the bench it was decided on."""

    attempt: OptimizeAttempt
    comparison: Comparison | None = None
    cached: bool = False


@dataclass(frozen=True)
class WriteBenchReport:
    """Rewrite reports/bench-optimize.json from `Decision.state`."""


Act = (
    Commit | Revert | Record | Note | Complete | GiveUp | Finish | RecordAttempt | WriteBenchReport
)

Action = Literal[
    "proceed",
    "plan",
    "give_up",
    "accept",
    "repair",
    "revert",
    "unusable_answer",
    "add_context",
    "stuck",
    "optimize",
    "verified",
    "bench_started",
    "keep",
]


@dataclass(frozen=True)
class Decision:
    """What a step decided: its name, the next state, and the acts that carry it out."""

    action: Action
    state: RunState
    acts: tuple[Act, ...] = ()

    def then(self, *acts: Act, action: Action | None = None) -> Decision:
        return Decision(action or self.action, self.state, self.acts + acts)


# --- outcomes: what a phase saw ------------------------------------------------------------


@dataclass(frozen=True)
class RepairDue:
    """A module or composed step is about to ask the model (the iteration budget decides)."""


@dataclass(frozen=True)
class Planned:
    """The plan phase's answer: a valid plan, or why there is none."""

    plan: Plan | None
    error: str | None = None


@dataclass(frozen=True)
class ComposedChecked:
    """The first check of the whole port once every module exists."""

    outcomes: list[CheckOutcome]


@dataclass(frozen=True)
class Unusable:
    """The model's answer (and its re-ask) could not be parsed."""

    error: str


@dataclass(frozen=True)
class Checked:
    """An edit was written and checked: `scope` are the step's own checks, `outcomes`
    every check run (the scope's first, then the regression guard's re-checks)."""

    scope: list[CheckOutcome]
    outcomes: list[CheckOutcome]


@dataclass(frozen=True)
class BudgetEnded:
    """A token, dollar or wall-time budget ended (before or during the step)."""

    reason: str


@dataclass(frozen=True)
class StartBenched:
    """Optimisation's first step: the verified port benched alone."""

    comparison: Comparison
    cached: bool = False


@dataclass(frozen=True)
class Unchanged:
    """An optimisation answer that changed no file."""


@dataclass(frozen=True)
class Benched:
    """An optimisation edit that passed every check, benched beside the current port."""

    scope: list[CheckOutcome]
    outcomes: list[CheckOutcome]
    comparison: Comparison
    cached: bool = False


Outcome = (
    RepairDue
    | Planned
    | ComposedChecked
    | Unusable
    | Checked
    | BudgetEnded
    | StartBenched
    | Unchanged
    | Benched
)
