"""A run's transcript read back as iterations: what `review`, `report` and `batch` show.

One iteration is one step of the loop (the journal's `step`): the prompts it rendered, the
model calls and answers, the edits with their diffs, the checks, the decision and the commit.
The journal is append-only and a step cut short by a kill is run again after `resumed`, so a
step can appear twice; the later attempt is the one that counted, but what the cut-short
attempt paid is real money and stays on the step's bill.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from envport.llm.ledger import CallTotals, call_totals
from envport.llm.types import Purpose, TokenUsage
from envport.runs.events import (
    ITERATION_EVENTS,
    RUN_EVENTS,
    AnswerEvent,
    BudgetExhaustedEvent,
    CheckEvent,
    CommitEvent,
    ContextEvent,
    DecisionEvent,
    EditEvent,
    Event,
    FinishedEvent,
    ModelCallEvent,
    ModelErrorEvent,
    OptimizeAttemptEvent,
    OptimizeBenchEvent,
    PromptEvent,
    ResumedEvent,
    RunEvent,
    read_events,
    step_of,
)
from envport.runs.state import CheckOutcome

OPTIMIZE_EVENTS = (OptimizeBenchEvent, OptimizeAttemptEvent)
CALL_FAILED_EVENTS = (BudgetExhaustedEvent, ModelErrorEvent)
LEVEL_ORDER = ("load", "review", "module", "l1", "l2", "l3", "l4", "answer")

E = TypeVar("E", bound=Event)


@dataclass
class Iteration:
    step: int
    events: list[Event] = field(default_factory=list)
    # Paid model calls of an earlier attempt of this step, cut short by a kill.
    earlier_calls: list[ModelCallEvent] = field(default_factory=list)

    def of(self, kind: type[E]) -> list[E]:
        return [event for event in self.events if isinstance(event, kind)]

    @property
    def prompts(self) -> list[PromptEvent]:
        return self.of(PromptEvent)

    @property
    def answers(self) -> list[AnswerEvent]:
        return self.of(AnswerEvent)

    @property
    def calls(self) -> list[ModelCallEvent]:
        return self.earlier_calls + self.of(ModelCallEvent)

    @property
    def edits(self) -> list[EditEvent]:
        return self.of(EditEvent)

    @property
    def checks(self) -> list[CheckEvent]:
        return self.of(CheckEvent)

    @property
    def decisions(self) -> list[DecisionEvent]:
        return self.of(DecisionEvent)

    @property
    def commits(self) -> list[CommitEvent]:
        return self.of(CommitEvent)

    @property
    def purpose(self) -> Purpose | None:
        prompts = self.prompts
        return prompts[0].purpose if prompts else None

    @property
    def kind(self) -> str:
        """generate, repair, plan, or check (a step that only checks: the whole-port check)."""
        if self.purpose is not None and self.purpose.phase:
            return self.purpose.phase.removesuffix("-reask")
        if self.checks:
            return "check"
        return "bench" if self.of(OptimizeBenchEvent) else "step"

    @property
    def scope(self) -> str:
        if self.purpose is not None and self.purpose.module:
            return self.purpose.module
        if self.kind == "plan":
            return "plan"
        checks = self.checks
        if checks and checks[0].scope != "composed":
            return checks[0].scope
        return "whole port"

    @property
    def number(self) -> int | None:
        """The iteration within its scope (0 generates, 1.. repair), when a model was asked."""
        return self.purpose.iteration if self.purpose is not None else None

    @property
    def label(self) -> str:
        number = f" #{self.number}" if self.number is not None else ""
        return f"{self.kind} {self.scope}{number}"

    @property
    def spent(self) -> CallTotals:
        return call_totals(self.calls)

    @property
    def usage(self) -> TokenUsage:
        return self.spent.usage

    @property
    def cost_usd(self) -> float:
        return self.spent.cost_usd

    @property
    def cached_calls(self) -> int:
        return self.spent.cached_calls

    @property
    def decision(self) -> str:
        decisions = self.decisions
        return decisions[-1].decision if decisions else ""

    def outcomes(self) -> list[CheckOutcome]:
        """Every check result of the iteration, the scope's own first, then re-checks."""
        return [o for check in self.checks for o in check.outcomes]

    def levels(self) -> dict[str, bool]:
        """Level -> whether every check of that level passed in this iteration."""
        return level_summary(self.outcomes())

    @property
    def passed(self) -> bool | None:
        """Did its checks pass? None when it ran none."""
        outcomes = self.outcomes()
        return all(o.passed for o in outcomes) if outcomes else None


def _sps(figures: dict[int, float]) -> str:
    return ", ".join(f"B={batch}: {sps:,.0f}" for batch, sps in figures.items()) or "-"


def describe_optimize(event: OptimizeBenchEvent | OptimizeAttemptEvent) -> str:
    """One line for an optimisation bench or round (`translate --optimize`)."""
    if isinstance(event, OptimizeBenchEvent):
        if event.error:
            return f"bench of the verified port failed: {event.error}"
        return f"benched the verified port, steps per second {_sps(event.sps)}"
    verdict = "kept" if event.kept else "reverted"
    measured = (
        f" ({event.ratio:.2f}x at B={event.batch}, {event.min_ratio:.2f}x needed)"
        if event.ratio is not None
        else ""
    )
    return f"optimisation round {event.round}: {verdict}{measured}: {event.why}"


def level_summary(outcomes: list[CheckOutcome]) -> dict[str, bool]:
    levels: dict[str, bool] = {}
    for outcome in outcomes:
        level = outcome.level or "?"
        # A passing load is the normal case; listing it everywhere is noise. The reference's
        # coverage is no level of the port's: its gaps are in the verdict, not a column.
        if (level == "load" and outcome.passed) or level == "coverage":
            continue
        levels[level] = levels.get(level, True) and outcome.passed
    order = {name: index for index, name in enumerate(LEVEL_ORDER)}
    return dict(sorted(levels.items(), key=lambda item: order.get(item[0], len(order))))


@dataclass
class Timeline:
    iterations: list[Iteration] = field(default_factory=list)
    run_events: list[RunEvent] = field(default_factory=list)
    contexts: dict[str, str] = field(default_factory=dict)  # stable prefix by sha256

    def find(self, step: int) -> Iteration | None:
        return next((it for it in self.iterations if it.step == step), None)

    @property
    def spent(self) -> CallTotals:
        return call_totals(call for iteration in self.iterations for call in iteration.calls)

    @property
    def usage(self) -> TokenUsage:
        return self.spent.usage

    @property
    def cost_usd(self) -> float:
        return self.spent.cost_usd

    @property
    def model_iterations(self) -> int:
        """Steps in which the model was asked (generate, repair, plan)."""
        return sum(1 for iteration in self.iterations if iteration.prompts)

    def finished(self) -> FinishedEvent | None:
        ended = [e for e in self.run_events if isinstance(e, FinishedEvent)]
        return ended[-1] if ended else None

    def decision_of(self, iteration: Iteration) -> str:
        """The iteration's last decision; the whole-port check that verifies a run ends it
        without one, and shows how the run finished instead."""
        if iteration.decision:
            return iteration.decision
        ended = self.finished()
        if ended is not None and iteration is self.iterations[-1]:
            return ended.status
        return ""


def read_timeline(transcript: Path) -> Timeline:
    return build_timeline(list(read_events(transcript)))


def build_timeline(events: list[Event]) -> Timeline:
    timeline = Timeline()
    steps: dict[int, Iteration] = {}
    carried: dict[int, list[ModelCallEvent]] = {}
    current: int | None = None
    for event in events:
        if isinstance(event, ContextEvent):
            timeline.contexts[event.sha256] = event.text
        if isinstance(event, RUN_EVENTS):
            timeline.run_events.append(event)
            if isinstance(event, ResumedEvent):
                # The steps from here on run again; their earlier attempt is superseded.
                for again in [s for s in steps if s >= event.step]:
                    old = steps.pop(again)
                    paid = [c for c in old.calls if not c.cached]
                    carried.setdefault(again, []).extend(paid)
                current = None
            continue
        # Model-call records come from the model layer and carry no step: they belong to
        # the step whose prompt came just before them.
        step = step_of(event)
        if step is None:
            step = current
        if step is None:
            continue  # before any step: nothing to attach it to
        current = step
        if step not in steps:
            steps[step] = Iteration(step, earlier_calls=carried.pop(step, []))
        steps[step].events.append(event)
    for step, calls in carried.items():
        # A superseded attempt whose step never ran again still cost what it cost.
        steps.setdefault(step, Iteration(step)).earlier_calls.extend(calls)
    merged: list[Iteration] = []
    for step in sorted(steps):
        iteration = steps[step]
        own = any(isinstance(e, ITERATION_EVENTS) for e in iteration.events)
        if not own and merged:
            merged[-1].events.extend(iteration.events)
            merged[-1].earlier_calls.extend(iteration.earlier_calls)
            continue
        merged.append(iteration)
    timeline.iterations = merged
    return timeline
