"""The run's decision policy as one pure function: `decide(state, outcome) -> Decision`.

A phase does the work of a step (asks the model, writes the edits, runs the checks, benches)
and reduces what it saw to an outcome; `decide` turns the run state and that outcome into a
`Decision`: the next run state and the acts the driver carries out, in order (commits,
reverts, journaled decisions, completing the step, giving up, finishing verified). Nothing
here touches a file, a process, the clock or a model, so every rule is unit-tested on its
own (tests/test_decide.py). The rules (docs/design.md, "A translate run", step 7):

  - iteration budget: a repair beyond `--max-iterations` per module (or per level, for
    the whole port) gives up instead of asking;
  - unusable answer: two unparseable answers in a row spend the iteration, and the next
    prompt says why;
  - revert: a check that passed before and fails after an edit means the edit is reverted
    (the regression guard; the attempt and its revert are both committed);
  - accept and advance: the scope's checks pass, so the next module (or the composed check,
    or verification) follows;
  - repair: the scope's checks fail, so the next step repairs;
  - stuck: the same divergence `stuck_after` times in a row adds context once, and if that
    does not move it either the run gives up;
  - verified: every level passes; with `--optimize` the optimisation phase follows;
  - budget ended: the run gives up, except during optimisation, which it only ends;
  - optimisation rounds: see `envport.pipeline.decision.decide_optimize`.
"""

from __future__ import annotations

from typing import Literal

from envport.pipeline.decision import decide_optimize
from envport.pipeline.decision.values import (
    BudgetEnded,
    Checked,
    Commit,
    Complete,
    ComposedChecked,
    Decision,
    GiveUp,
    Note,
    Outcome,
    Planned,
    Record,
    RepairDue,
    Revert,
    Unusable,
)
from envport.pipeline.decision.verdict import optimized, summary, verified
from envport.runs.state import CheckOutcome, RunState, StuckState
from envport.targets.registry import target

# --- texts shared by the rules -------------------------------------------------------------


def signature(failures: list[CheckOutcome]) -> str:
    return " || ".join(sorted(o.signature or o.name for o in failures if not o.passed))


def first_line(outcome: CheckOutcome) -> str:
    text = outcome.failures[0] if outcome.failures else "failed"
    return text.splitlines()[0] if text else "failed"


def step_kind(state: RunState) -> Literal["generate", "repair"]:
    return "generate" if state.phase == "modules" and state.iteration == 0 else "repair"


def step_label(state: RunState) -> str:
    """How the step's commits name it."""
    return f"{step_kind(state)} {state.scope} iter {state.iteration}"


def repair_key(state: RunState) -> str:
    """What a repair is budgeted against: the module, or the first failing level."""
    if state.phase == "modules":
        return state.scope
    return next((o.level for o in state.open_failures if not o.passed), "l3")


def regressions(state: RunState, outcomes: list[CheckOutcome]) -> list[CheckOutcome]:
    """Checks that passed before this step and fail after it."""
    return [
        o
        for o in outcomes
        if not o.passed and o.name in state.results and state.results[o.name].passed
    ]


# --- the rules -----------------------------------------------------------------------------


def decide(state: RunState, outcome: Outcome) -> Decision:
    """The decision for `outcome` seen in a step taken from `state` (never mutated)."""
    if isinstance(outcome, BudgetEnded):
        return _budget_ended(state, outcome.reason)
    if state.phase == "optimize":
        return decide_optimize.decide_round(state, outcome)
    if isinstance(outcome, RepairDue):
        return _repair_due(state)
    if isinstance(outcome, Planned):
        return _planned(state, outcome)
    if isinstance(outcome, ComposedChecked):
        return _composed_checked(state, outcome.outcomes)
    if isinstance(outcome, Unusable):
        return _unusable(state, outcome.error)
    if isinstance(outcome, Checked):
        return _checked(state, outcome)
    raise TypeError(f"no rule for {type(outcome).__name__} in phase {state.phase}")


def give_up(state: RunState, reason: str) -> Decision:
    return Decision("give_up", state.model_copy(deep=True), (GiveUp(reason),))


def _budget_ended(state: RunState, reason: str) -> Decision:
    if state.phase == "optimize":
        # The port passed every level before optimisation began and the port on disk is
        # the last kept version: a budget ending now ends the optimisation only.
        return verified(state.model_copy(deep=True), f"{optimized(state)}; stopped: {reason}")
    return give_up(state, reason)


def _repair_due(state: RunState) -> Decision:
    if step_kind(state) == "repair":
        key = repair_key(state)
        modules = state.phase == "modules"
        used = state.iteration - 1 if modules else state.level_repairs.get(key, 0)
        if used >= state.limits.max_iterations:
            where = f"module {state.scope}" if modules else f"level {key}"
            last = first_line(state.open_failures[0]) if state.open_failures else "none"
            return give_up(
                state,
                f"iteration budget: {used} repairs of {where} did not make it pass "
                f"(--max-iterations {state.limits.max_iterations}); last failure: {last}",
            )
    return Decision("proceed", state)


def _planned(state: RunState, outcome: Planned) -> Decision:
    plan = outcome.plan
    if plan is None:
        return give_up(state, f"no usable module plan: {outcome.error}")
    nxt = state.model_copy(deep=True)
    nxt.modules = plan.modules
    nxt.entry = plan.entry
    nxt.phase = "modules"
    names = ", ".join(m.name for m in plan.modules)
    record = {
        "decision": "plan",
        "modules": [m.model_dump() for m in plan.modules],
        "entry": plan.entry,
    }
    acts = (Record(record), Commit(f"plan: {names}"), Complete(), Note(f"planned modules {names}"))
    return Decision("plan", nxt, acts)


def _composed_checked(state: RunState, outcomes: list[CheckOutcome]) -> Decision:
    nxt = state.model_copy(deep=True)
    nxt.composed_checked = True
    nxt.results.update({o.name: o for o in outcomes})
    if all(o.passed for o in outcomes):
        return verified(nxt)
    nxt.iteration = 1
    nxt.open_failures = [o for o in outcomes if not o.passed]
    nxt.stuck = StuckState(signature=signature(nxt.open_failures), count=1)
    record = Record({"decision": "repair", "why": summary(outcomes)})
    return Decision("repair", nxt, (record, Complete()))


def _attempted(state: RunState) -> RunState:
    """The next state of a module or composed step that asked the model."""
    nxt = state.model_copy(deep=True)
    nxt.notes = []
    if state.phase == "composed":
        key = repair_key(state)
        nxt.level_repairs[key] = nxt.level_repairs.get(key, 0) + 1
    return nxt


def _unusable(state: RunState, error: str) -> Decision:
    """Two unusable answers in a row: the iteration is spent, the model is told why."""
    nxt = _attempted(state)
    nxt.notes.append(f"Your answer in iteration {state.iteration} was not applied: {error}")
    if not nxt.open_failures:
        module = state.scope
        nxt.open_failures = [
            CheckOutcome(
                name=f"module:{module}",
                scope=module,
                level="module",
                passed=False,
                failures=[
                    f"`{target(state.target).file_of(module)}` has not been written: the answer "
                    "was unusable"
                ],
                signature=f"module:{module}|unwritten",
            )
        ]
    nxt.history.append(f"iteration {state.iteration}: answer unusable ({error})")
    nxt.iteration += 1
    acts = (
        Commit(f"{step_label(state)}: answer unusable"),
        Record({"decision": "unusable_answer", "why": error}),
        Note(f"answer unusable: {error}"),
    )
    return _count_stuck(Decision("unusable_answer", nxt, acts))


def _checked(state: RunState, outcome: Checked) -> Decision:
    label = step_label(state)
    nxt = _attempted(state)
    broke = regressions(state, outcome.outcomes)
    if broke:
        return _revert(state, nxt, label, outcome.outcomes, broke)
    nxt.results.update({o.name: o for o in outcome.outcomes})
    said = summary(outcome.scope)
    if all(o.passed for o in outcome.scope):
        accepted = Decision(
            "accept", nxt, (Commit(f"{label}: {said}"), Record({"decision": "accept", "why": said}))
        )
        return _advance(accepted)
    nxt.open_failures = [o for o in outcome.scope if not o.passed]
    nxt.history.append(f"iteration {state.iteration}: {first_line(nxt.open_failures[0])}")
    nxt.iteration += 1
    acts = (Commit(f"{label}: {said}"), Record({"decision": "repair", "why": said}))
    return _count_stuck(Decision("repair", nxt, acts))


def _revert(
    state: RunState,
    nxt: RunState,
    label: str,
    outcomes: list[CheckOutcome],
    broke: list[CheckOutcome],
) -> Decision:
    names = ", ".join(o.name for o in broke)
    detail = broke[0].failures[0] if broke[0].failures else "it failed"
    nxt.notes.append(
        f"Your edit in iteration {state.iteration} was reverted because it made {names} "
        f"fail, which passed before. The files are back as they were. What broke:\n{detail}"
    )
    nxt.history.append(f"iteration {state.iteration}: reverted, it broke {names}")
    nxt.iteration += 1
    record = {
        "decision": "revert",
        "broke": [o.name for o in broke],
        "why": f"{names} passed before this edit and fails after it",
    }
    acts = (
        Commit(f"{label}: {summary(outcomes)}; breaks {names} -> reverted"),
        Revert(f"revert {label}: it broke {names}, which passed before"),
        Record(record),
        Note(f"reverted: the edit broke {names}"),
    )
    return _count_stuck(Decision("revert", nxt, acts))


def _count_stuck(decision: Decision) -> Decision:
    """Count the same divergence in a row; add context once, then stop."""
    nxt = decision.state
    seen = signature(nxt.open_failures)
    if seen == nxt.stuck.signature:
        nxt.stuck.count += 1
    else:
        nxt.stuck = StuckState(signature=seen, count=1)
    limit = nxt.limits.stuck_after
    if nxt.stuck.count >= limit and nxt.stuck.context_added:
        reason = (
            f"stuck: the same divergence {nxt.stuck.count} times in a row, even with more "
            f"context ({first_line(nxt.open_failures[0])})"
        )
        record = Record({"decision": "stuck", "signature": seen})
        return decision.then(Complete(), record, GiveUp(reason), action="stuck")
    if nxt.stuck.count >= limit:
        nxt.stuck.context_added = True
        why = f"the same divergence {nxt.stuck.count} times in a row"
        record = Record({"decision": "add_context", "why": why})
        return decision.then(record, Complete(), action="add_context")
    return decision.then(Complete())


def _advance(decision: Decision) -> Decision:
    nxt = decision.state
    nxt.iteration = 0
    nxt.open_failures = []
    nxt.notes = []
    nxt.history = []
    nxt.stuck = StuckState()
    if nxt.phase == "modules":
        nxt.module_index += 1
        if nxt.module_index >= len(nxt.modules):
            nxt.phase = "composed"
            nxt.composed_checked = False
        return decision.then(Complete())
    done = verified(nxt)
    return Decision(done.action, done.state, decision.acts + done.acts)
