"""What both rule sets (decide.py, decide_optimize.py, beside it) end with: a verified port, and the
one-line summaries of checks they journal. Apart so neither rule module imports the other
back."""

from __future__ import annotations

from envport.pipeline.decision.values import Complete, Decision, Finish, Note, Record
from envport.pipeline.optimize import kept_gain
from envport.runs.state import CheckOutcome, RunState, StuckState


def summary(outcomes: list[CheckOutcome]) -> str:
    shown = [o for o in outcomes if not (o.level == "load" and o.passed)]
    return ", ".join(f"{o.name} {'pass' if o.passed else 'FAIL'}" for o in shown) or "no checks"


def optimized(state: RunState) -> str:
    """The verified run's reason after optimisation: what it gained, at the largest batch."""
    progress = state.optimization
    kept = sum(attempt.kept for attempt in progress.attempts)
    done = f"{kept} of {progress.rounds_done} optimisation rounds kept"
    gain = kept_gain(state)
    if gain is not None:
        done += f", {gain:.2f}x the SPS at B={state.optimize.largest}"
    return f"every level passes; {done}"


def verified(nxt: RunState, reason: str = "every level passes") -> Decision:
    """Every level passes (`nxt` is the step's next state, changed in place)."""
    if nxt.optimize.rounds and nxt.phase != "optimize":
        # The port is verified, and --optimize asks for speed next.
        nxt.phase = "optimize"
        nxt.iteration = 0
        nxt.open_failures, nxt.notes, nxt.history = [], [], []
        nxt.stuck = StuckState()
        rounds = nxt.optimize.rounds
        why = f"every level passes; {rounds} optimisation rounds follow"
        acts = (
            Record({"decision": "optimize", "why": why}),
            Complete(),
            Note(f"every level passes; optimising ({rounds} rounds)"),
        )
        return Decision("optimize", nxt, acts)
    nxt.phase = "done"
    nxt.status = "verified"
    # What the passing checks did not show (a --strict run never gets here with any).
    nxt.gaps = list({gap: None for o in nxt.results.values() for gap in o.gaps})
    count = len(nxt.gaps)
    nxt.reason = reason + (f", with {count} gap{'' if count == 1 else 's'}" if count else "")
    return Decision("verified", nxt, (Complete(), Finish()))
