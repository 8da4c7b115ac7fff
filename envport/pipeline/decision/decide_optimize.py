"""The optimisation phase's rules, part of `decide` (pure, like it).

A verified port gets `--optimize-rounds` rounds. An edit is kept only when every level
still passes and SPS at the largest batch improves by `min_gain` (5%); otherwise it is
reverted like a regression (the attempt and its revert both committed) and the next prompt
says why. An unusable answer or one that changes no file spends its round. After the last
round the run is verified with what the kept rounds gained. The first step benches the
verified port alone; if that fails the run is verified, not optimised.
"""

from __future__ import annotations

from envport.pipeline.decision.values import (
    Act,
    Action,
    Benched,
    Checked,
    Commit,
    Complete,
    Decision,
    Note,
    Outcome,
    Record,
    RecordAttempt,
    Revert,
    StartBenched,
    Unchanged,
    Unusable,
    WriteBenchReport,
)
from envport.pipeline.decision.verdict import optimized, summary, verified
from envport.pipeline.optimize import Comparison, ratio_text
from envport.runs.state import OptimizeAttempt, RunState


def decide_round(state: RunState, outcome: Outcome) -> Decision:
    if isinstance(outcome, StartBenched):
        return _start_benched(state, outcome.comparison)
    number = state.optimization.rounds_done + 1
    label = f"optimize round {number}"
    nxt = state.model_copy(deep=True)
    nxt.notes = []
    nxt.iteration = number
    nxt.optimization.rounds_done = number
    attempt = OptimizeAttempt(
        round=number,
        kept=False,
        why="",
        batch=state.optimize.largest,
        sps_before=dict(state.optimization.sps),
    )
    if isinstance(outcome, Unusable):
        attempt.why = f"answer unusable ({outcome.error})"
        nxt.notes.append(
            f"Your answer in optimisation round {number} was not applied: {outcome.error}"
        )
        return _end_round(state, nxt, attempt, (Commit(f"{label}: answer unusable"),))
    if isinstance(outcome, Unchanged):
        attempt.why = "the answer changed no file"
        nxt.notes.append(f"Your answer in optimisation round {number} changed no file.")
        return _end_round(state, nxt, attempt, (Commit(f"{label}: no change"),))
    if isinstance(outcome, Checked):
        # In this phase every check passed before, so any failure is a regression.
        failed = [o for o in outcome.outcomes if not o.passed]
        broken = ", ".join(o.name for o in failed)
        detail = failed[0].failures[0] if failed[0].failures else "it failed"
        attempt.why = f"it made {broken} fail"
        nxt.notes.append(
            f"Your optimisation in round {number} was reverted because it made {broken} "
            f"fail; every level must still pass. The files are back as they were. "
            f"What broke:\n{detail}"
        )
        acts = _reverted(
            label, f"{summary(outcome.outcomes)}; breaks {broken}", f"it broke {broken}"
        )
        return _end_round(state, nxt, attempt, acts)
    if isinstance(outcome, Benched):
        return _benched(state, nxt, attempt, label, outcome)
    raise TypeError(f"no optimisation rule for {type(outcome).__name__}")


def _start_benched(state: RunState, comparison: Comparison) -> Decision:
    nxt = state.model_copy(deep=True)
    speed = comparison.speeds[0] if comparison.speeds else None
    if speed is None:
        return verified(nxt, f"every level passes; not optimised: {comparison.error}")
    nxt.optimization.sps = dict(speed.sps)
    nxt.optimization.start_sps = dict(speed.sps)
    largest = state.optimize.largest
    note = Note(f"SPS at B={largest}: {speed.sps[largest]:,.0f}")
    return Decision("bench_started", nxt, (WriteBenchReport(), Complete(), note))


def _benched(
    state: RunState, nxt: RunState, attempt: OptimizeAttempt, label: str, outcome: Benched
) -> Decision:
    number = attempt.round
    comparison = outcome.comparison
    threshold = 1 + state.optimize.min_gain
    if comparison.error is not None:
        which = "the edited port" if comparison.failed == 1 else "the current port"
        attempt.why = f"the bench of {which} failed: {comparison.error}"
        nxt.notes.append(
            f"Your optimisation in round {number} was reverted because the bench of "
            f"{which} failed: {comparison.error}. The files are back as they were."
        )
        undone = _reverted(label, "bench failed", f"the bench of {which} failed")
        return _end_round(state, nxt, attempt, undone, comparison, outcome.cached)
    before, after = comparison.speeds[0].sps, comparison.speeds[1].sps
    attempt.sps_before, attempt.sps_after = dict(before), dict(after)
    ratio = after[attempt.batch] / before[attempt.batch]
    attempt.ratio = round(ratio, 4)
    figures = ratio_text(attempt)
    scope = summary(outcome.scope)
    if ratio >= threshold:
        attempt.kept = True
        attempt.why = f"every level passes and {figures}, at least {threshold:.2f}x"
        nxt.results.update({o.name: o for o in outcome.outcomes})
        nxt.optimization.sps = dict(after)
        acts: tuple[Act, ...] = (Commit(f"{label}: {scope}; {figures} -> kept"),)
    else:
        attempt.why = f"{figures}, below the {threshold:.2f}x needed"
        # The current port stays, and its numbers are the ones just measured.
        nxt.optimization.sps = dict(before)
        nxt.notes.append(
            f"Your optimisation in round {number} was reverted: every level still "
            f"passed, but {figures} against the current port, below the "
            f"{threshold:.2f}x needed to keep it. The files are back as they were."
        )
        acts = _reverted(label, f"{scope}; {figures}", f"{figures}, below {threshold:.2f}x")
    return _end_round(state, nxt, attempt, acts, comparison, outcome.cached)


def _reverted(label: str, summary_text: str, why: str) -> tuple[Act, ...]:
    """The attempt and its undoing both stay in the history, as with the regression guard."""
    return (Commit(f"{label}: {summary_text} -> reverted"), Revert(f"revert {label}: {why}"))


def _end_round(
    state: RunState,
    nxt: RunState,
    attempt: OptimizeAttempt,
    acts: tuple[Act, ...],
    comparison: Comparison | None = None,
    cached: bool = False,
) -> Decision:
    nxt.optimization.attempts.append(attempt)
    verdict = "kept" if attempt.kept else "reverted"
    acts += (
        RecordAttempt(attempt, comparison, cached),
        Record({"decision": "keep" if attempt.kept else "revert", "why": attempt.why}),
        WriteBenchReport(),
        Note(f"round {attempt.round} {verdict}: {attempt.why}"),
    )
    action: Action = "keep" if attempt.kept else "revert"
    if attempt.round >= state.optimize.rounds:
        done = verified(nxt, optimized(nxt))
        return Decision(done.action, done.state, acts + done.acts)
    return Decision(action, nxt, (*acts, Complete()))
