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
from typing import Any

from envport.llm.types import TokenUsage
from envport.runs.journal import read_events

# Events that describe the run as a whole, not one of its steps.
RUN_EVENTS = frozenset({"run_started", "resumed", "finished", "interrupted", "stopped"})
# Events that make a step an iteration of its own; a step with only a decision (the driver
# journals "stuck" after the step counter moved on) belongs to the iteration before it.
ITERATION_EVENTS = frozenset(
    {"prompt", "answer", "edit", "check", "parse_error", "optimize_bench", "optimize_attempt"}
)
OPTIMIZE_EVENTS = ("optimize_bench", "optimize_attempt")
LEVEL_ORDER = ("load", "module", "l1", "l2", "l3", "l4", "answer")


@dataclass
class Iteration:
    step: int
    events: list[dict[str, Any]] = field(default_factory=list)
    # Paid model calls of an earlier attempt of this step, cut short by a kill.
    earlier_calls: list[dict[str, Any]] = field(default_factory=list)

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [event for event in self.events if event.get("event") == kind]

    @property
    def prompts(self) -> list[dict[str, Any]]:
        return self.of("prompt")

    @property
    def answers(self) -> list[dict[str, Any]]:
        return self.of("answer")

    @property
    def calls(self) -> list[dict[str, Any]]:
        return self.earlier_calls + self.of("model_call")

    @property
    def edits(self) -> list[dict[str, Any]]:
        return self.of("edit")

    @property
    def checks(self) -> list[dict[str, Any]]:
        return self.of("check")

    @property
    def decisions(self) -> list[dict[str, Any]]:
        return self.of("decision")

    @property
    def commits(self) -> list[dict[str, Any]]:
        return self.of("commit")

    @property
    def purpose(self) -> dict[str, Any]:
        prompts = self.prompts
        return dict(prompts[0].get("purpose") or {}) if prompts else {}

    @property
    def kind(self) -> str:
        """generate, repair, plan, or check (a step that only checks: the whole-port check)."""
        phase = str(self.purpose.get("phase") or "")
        if phase:
            return phase.removesuffix("-reask")
        if self.checks:
            return "check"
        return "bench" if self.of("optimize_bench") else "step"

    @property
    def scope(self) -> str:
        module = self.purpose.get("module")
        if module:
            return str(module)
        if self.kind == "plan":
            return "plan"
        checks = self.checks
        if checks and checks[0].get("scope") not in (None, "composed"):
            return str(checks[0]["scope"])
        return "whole port"

    @property
    def number(self) -> int | None:
        """The iteration within its scope (0 generates, 1.. repair), when a model was asked."""
        value = self.purpose.get("iteration")
        return int(value) if value is not None else None

    @property
    def label(self) -> str:
        number = f" #{self.number}" if self.number is not None else ""
        return f"{self.kind} {self.scope}{number}"

    @property
    def usage(self) -> TokenUsage:
        total = TokenUsage()
        for call in self.calls:
            if not call.get("cached"):
                total = total + TokenUsage.model_validate(call.get("usage") or {})
        return total

    @property
    def cost_usd(self) -> float:
        return sum(float(c.get("cost_usd") or 0.0) for c in self.calls if not c.get("cached"))

    @property
    def cached_calls(self) -> int:
        return sum(1 for call in self.calls if call.get("cached"))

    @property
    def decision(self) -> str:
        decisions = self.decisions
        return str(decisions[-1].get("decision", "")) if decisions else ""

    def outcomes(self) -> list[dict[str, Any]]:
        """Every check result of the iteration, the scope's own first, then re-checks."""
        return [o for check in self.checks for o in check.get("outcomes") or []]

    def levels(self) -> dict[str, bool]:
        """Level -> whether every check of that level passed in this iteration."""
        return level_summary(self.outcomes())

    @property
    def passed(self) -> bool | None:
        """Did its checks pass? None when it ran none."""
        outcomes = self.outcomes()
        return all(o.get("passed") for o in outcomes) if outcomes else None


def _sps(figures: dict[str, Any]) -> str:
    return ", ".join(f"B={batch}: {float(sps):,.0f}" for batch, sps in figures.items()) or "-"


def describe_optimize(event: dict[str, Any]) -> str:
    """One line for an optimisation bench or round (`translate --optimize`)."""
    if event.get("event") == "optimize_bench":
        if event.get("error"):
            return f"bench of the verified port failed: {event['error']}"
        return f"benched the verified port, steps per second {_sps(event.get('sps') or {})}"
    verdict = "kept" if event.get("kept") else "reverted"
    ratio = event.get("ratio")
    measured = (
        f" ({float(ratio):.2f}x at B={event.get('batch')}, "
        f"{float(event.get('min_ratio') or 1.0):.2f}x needed)"
        if ratio is not None
        else ""
    )
    return f"optimisation round {event.get('round')}: {verdict}{measured}: {event.get('why', '')}"


def level_summary(outcomes: list[dict[str, Any]]) -> dict[str, bool]:
    levels: dict[str, bool] = {}
    for outcome in outcomes:
        level = str(outcome.get("level") or "?")
        # A passing load is the normal case; listing it everywhere is noise.
        if level == "load" and outcome.get("passed"):
            continue
        levels[level] = levels.get(level, True) and bool(outcome.get("passed"))
    order = {name: index for index, name in enumerate(LEVEL_ORDER)}
    return dict(sorted(levels.items(), key=lambda item: order.get(item[0], len(order))))


@dataclass
class Timeline:
    iterations: list[Iteration] = field(default_factory=list)
    run_events: list[dict[str, Any]] = field(default_factory=list)
    contexts: dict[str, str] = field(default_factory=dict)  # stable prefix by sha256

    def find(self, step: int) -> Iteration | None:
        return next((it for it in self.iterations if it.step == step), None)

    @property
    def usage(self) -> TokenUsage:
        total = TokenUsage()
        for iteration in self.iterations:
            total = total + iteration.usage
        return total

    @property
    def cost_usd(self) -> float:
        return sum(iteration.cost_usd for iteration in self.iterations)

    @property
    def model_iterations(self) -> int:
        """Steps in which the model was asked (generate, repair, plan)."""
        return sum(1 for iteration in self.iterations if iteration.prompts)


def read_timeline(transcript: Path) -> Timeline:
    return build_timeline(list(read_events(transcript)))


def build_timeline(events: list[dict[str, Any]]) -> Timeline:
    timeline = Timeline()
    steps: dict[int, Iteration] = {}
    carried: dict[int, list[dict[str, Any]]] = {}
    current: int | None = None
    for event in events:
        kind = event.get("event")
        if kind == "context":
            timeline.contexts[str(event.get("sha256"))] = str(event.get("text") or "")
        if kind in RUN_EVENTS:
            timeline.run_events.append(event)
            if kind == "resumed":
                # The steps from here on run again; their earlier attempt is superseded.
                resumed_at = int(event.get("step") or 0)
                for step in [s for s in steps if s >= resumed_at]:
                    old = steps.pop(step)
                    paid = [c for c in old.calls if not c.get("cached")]
                    carried.setdefault(step, []).extend(paid)
                current = None
            continue
        # Model-call records come from the model layer and carry no step: they belong to
        # the step whose prompt came just before them.
        step = event.get("step", current)
        if step is None:
            continue
        step = int(step)
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
        own = any(e.get("event") in ITERATION_EVENTS for e in iteration.events)
        if not own and merged:
            merged[-1].events.extend(iteration.events)
            merged[-1].earlier_calls.extend(iteration.earlier_calls)
            continue
        merged.append(iteration)
    timeline.iterations = merged
    return timeline
