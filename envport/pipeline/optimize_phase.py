"""The optimisation phase's step (`--optimize`): bench the verified port once, then one
round per step: ask for a faster port, check it, bench it beside the current one.

The first prompt's numbers are measured in a step of their own and kept in the run state,
so a round run again after a kill renders the same prompt (cache hit). Whether a round is
kept is `decide`'s (`pipeline/decision/decide_optimize.py`).
"""

from __future__ import annotations

from envport.llm import Purpose
from envport.pipeline.decision.decide import decide
from envport.pipeline.decision.values import Benched, Checked, StartBenched, Unchanged, Unusable
from envport.pipeline.optimize import snapshot
from envport.pipeline.phases import StepContext, StepResult, write_answer
from envport.repair.apply import read_files
from envport.repair.search_replace import parse_edit_answer
from envport.spec import PortSpec, load_spec


def optimize(ctx: StepContext) -> StepResult:
    if not ctx.state.optimization.sps:
        return _bench_start(ctx)
    return _round(ctx)


def _spec_now(ctx: StepContext) -> PortSpec:
    """The run's frozen spec as it is now (it gains the module plan, if one was made)."""
    return load_spec(ctx.run.spec_file)


def _bench_start(ctx: StepContext) -> StepResult:
    state = ctx.state
    ctx.note(f"benching the verified port at B={state.optimize.batch_sizes}")
    comparison, cached = ctx.benches.measure(
        state.step, _spec_now(ctx), state.target, [ctx.run.port], state.optimize
    )
    ctx.recorder.optimize_bench(state.step, comparison, cached)
    return decide(state, StartBenched(comparison, cached))


def _round(ctx: StepContext) -> StepResult:
    state = ctx.state
    number = state.optimization.rounds_done + 1
    port_files = ctx.builder.target.port_files
    files = read_files(ctx.run.port, port_files)
    parsed, error = ctx.asker.ask(
        state,
        Purpose(phase="optimize", iteration=number),
        ctx.builder.optimize(state, files),
        lambda text: parse_edit_answer(text, ctx.run.port, files, port_files=port_files),
        required=[],
        edits=True,
    )
    if parsed is None:
        return decide(state, Unusable(error or "unparseable"))
    # The current port, copied before the edit: the bench runs both side by side.
    current = snapshot(ctx.run.port, ctx.run.cache / "optimize" / "current")
    changed = write_answer(ctx, parsed)
    if not changed:
        return decide(state, Unchanged())
    ctx.note("edited " + ", ".join(e.stat() for e in changed))
    # Every check that could change runs again; in this phase all passed, so any failure
    # is a regression.
    runs = ctx.checker.after_edit(state, {edit.path for edit in changed})
    outcomes = [o for run in runs for o in run.outcomes]
    if not all(o.passed for o in outcomes):
        return decide(state, Checked(scope=runs[0].outcomes, outcomes=outcomes))
    ctx.note("benching the edited port against the current one")
    comparison, cached = ctx.benches.measure(
        state.step, _spec_now(ctx), state.target, [current, ctx.run.port], state.optimize
    )
    return decide(state, Benched(runs[0].outcomes, outcomes, comparison, cached))
