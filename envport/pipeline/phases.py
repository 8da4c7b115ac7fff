"""The phases of a translate run, each a function `step(ctx) -> StepResult`.

A phase does a step's work (asks the model, writes the edits, runs the checks), records the
evidence through the recorder as it comes, and reduces what it saw to an outcome for
`decide`; the decision it returns is what the driver carries out (commits, the journaled
decision, completing the step). The optimisation phase is in `pipeline/optimize_phase.py`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from envport.llm import Purpose
from envport.pipeline.asking import Asker
from envport.pipeline.decision.decide import decide, step_kind
from envport.pipeline.decision.values import (
    Checked,
    ComposedChecked,
    Decision,
    Planned,
    RepairDue,
    Unusable,
)
from envport.pipeline.optimize import BenchCache
from envport.pipeline.plan import parse_plan
from envport.pipeline.prompting import PromptBuilder
from envport.pipeline.recorder import Recorder
from envport.pipeline.schedule import Checker
from envport.repair.apply import AppliedEdit, apply_edits, read_files
from envport.repair.edits import CASE_SUFFIX, EditParseError, ParsedAnswer, parse_answer
from envport.repair.search_replace import parse_edit_answer
from envport.runs.layout import RunDir
from envport.runs.spec_copy import write_planned_spec
from envport.runs.state import COMPOSED, RunState
from envport.spec import PortSpec
from envport.targets.reference import Reference
from envport.verifiers.levels.l3.cases import proposal_problem

#: A step's result is the decision the driver carries out.
StepResult = Decision


@dataclass(frozen=True)
class StepContext:
    """Everything a phase's step works with; `state` is the run's state at the step's start."""

    state: RunState
    run: RunDir
    spec: PortSpec
    builder: PromptBuilder
    recorder: Recorder
    asker: Asker
    checker: Checker
    benches: BenchCache
    note: Callable[[str], None]


def plan(ctx: StepContext) -> StepResult:
    """The model proposes the modules (the spec lists none for the target)."""
    state = ctx.state
    proposed, error = ctx.asker.ask(
        state,
        Purpose(phase="plan", iteration=0),
        ctx.builder.plan(state),
        lambda text: parse_plan(text, state.target, ctx.spec.game is not None),
        required=[],
        plan=True,
    )
    decision = decide(state, Planned(proposed, error))
    if proposed is not None:
        # The frozen spec gains the plan before the plan's commit.
        write_planned_spec(
            ctx.run.spec_file, ctx.spec, state.target, proposed.entry, proposed.modules
        )
    return decision


def first_composed_check(ctx: StepContext) -> StepResult:
    """Every module exists: check the whole port before asking for anything."""
    run = ctx.checker.composed(ctx.state)
    return decide(ctx.state, ComposedChecked(run.outcomes))


def model_step(ctx: StepContext) -> StepResult:
    """Generate a module, repair it, or repair the whole port: ask, edit, check."""
    state = ctx.state
    due = decide(state, RepairDue())
    if due.action != "proceed":
        return due
    scope = state.scope
    kind = step_kind(state)
    purpose = Purpose(
        phase=kind, module=None if scope == COMPOSED else scope, iteration=state.iteration
    )
    files = read_files(ctx.run.port, ctx.builder.target.port_files)
    task, required = _task(ctx, kind, files)
    # A repair may answer with search/replace edits to the port's files as they are now;
    # a module is generated whole.
    edits = kind != "generate"
    parsed, error = ctx.asker.ask(
        state,
        purpose,
        task,
        checking_cases(
            ctx.spec,
            lambda text: (
                parse_edit_answer(
                    text, ctx.run.port, files, required, port_files=ctx.builder.target.port_files
                )
                if edits
                else parse_answer(text, ctx.run.port, required, ctx.builder.target.port_files)
            ),
        ),
        required=required,
        edits=edits,
    )
    if parsed is None:
        return decide(state, Unusable(error or "unparseable"))
    changed = write_answer(ctx, parsed)
    ctx.note("edited " + (", ".join(e.stat() for e in changed) or "nothing"))
    runs = ctx.checker.after_edit(state, {edit.path for edit in changed})
    outcomes = [o for run in runs for o in run.outcomes]
    return decide(state, Checked(scope=runs[0].outcomes, outcomes=outcomes))


def _task(ctx: StepContext, kind: str, files: dict[str, str]) -> tuple[str, list[str]]:
    """The step's prompt and the files its answer must contain."""
    state = ctx.state
    if kind == "generate":
        return ctx.builder.generate(state, files)
    # A module whose generation failed is still owed whole.
    owed = ctx.builder.target.file(state.scope)
    required = [owed] if state.phase == "modules" and owed not in files else []
    return ctx.builder.repair(state, files), required


def write_answer(ctx: StepContext, parsed: ParsedAnswer) -> list[AppliedEdit]:
    """Write an answer's files into the port and its proposed tests aside, both recorded;
    the edits that changed a file."""
    applied = apply_edits(ctx.run.port, parsed.files)
    ctx.recorder.edits(ctx.state.step, applied)
    ctx.recorder.proposed_tests(ctx.state, parsed)
    return [edit for edit in applied if edit.changed]


# Proposed cases are kept for the rest of the run and never overwritten, so a case that
# cannot be used (malformed, a state of the wrong shape, a case the reference raises on)
# would fail every composed check after it, which no repair of the port could pass. Tried
# on the trusted reference when proposed (in the driver, as `observed.py` steps it), such a
# proposal makes the answer unusable instead: the model is asked again with the reason.
def checking_cases(
    spec: PortSpec, parse: Callable[[str], ParsedAnswer]
) -> Callable[[str], ParsedAnswer]:
    """`parse`, refusing an answer whose proposed case could not be used."""

    def parse_and_check(text: str) -> ParsedAnswer:
        parsed = parse(text)
        proposals = {n: t for n, t in parsed.tests.items() if n.endswith(CASE_SUFFIX)}
        if not proposals:
            return parsed
        reference = Reference(spec)
        for name, content in sorted(proposals.items()):
            problem = proposal_problem(reference, name.rsplit("/", 1)[-1], content)
            if problem is not None:
                where, reason = problem
                raise EditParseError(
                    f"proposed case {where}: {reason}; correct the case or leave it out "
                    "(a case is played on the reference exactly as given)"
                )
        return parsed

    return parse_and_check
