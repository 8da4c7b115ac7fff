"""Every rule of the driver's decision policy, one test each: `decide(state, outcome)` is pure,
so these need no model, no subprocess, no git and no verifier. The end-to-end tests in
test_translate.py and test_optimize.py show the driver carrying the decisions out."""

from __future__ import annotations

from typing import Any

import pytest

from envport.pipeline.decision.decide import decide
from envport.pipeline.decision.values import (
    Benched,
    BudgetEnded,
    Checked,
    Commit,
    ComposedChecked,
    Decision,
    GiveUp,
    Planned,
    Record,
    RecordAttempt,
    RepairDue,
    Revert,
    StartBenched,
    Unchanged,
    Unusable,
)
from envport.pipeline.optimize import Comparison, PortSpeed
from envport.pipeline.plan import Plan
from envport.runs.state import (
    CheckOutcome,
    Limits,
    OptimizeAttempt,
    OptimizeSettings,
    RunState,
    StuckState,
)
from envport.spec import ModuleSpec


def state(**fields: Any) -> RunState:
    """A run of two modules, physics then env, at the first module's generation."""
    base: dict[str, Any] = {
        "run_id": "r",
        "spec_source": "examples/cartpole",
        "spec_name": "cartpole",
        "target": "numpy",
        "model": "openai:fake-model",
        "modules": [ModuleSpec(name="physics"), ModuleSpec(name="env", depends_on=["physics"])],
        "step": 7,
    }
    base.update(fields)
    return RunState(**base)


def outcome(name: str, passed: bool, scope: str = "env", level: str = "l1", **extra: Any):
    failures = [] if passed else [f"{name}: expected 1, got 0\nmore"]
    return CheckOutcome(
        name=name, scope=scope, level=level, passed=passed, failures=failures, **extra
    )


def kinds(decision: Decision) -> list[str]:
    return [type(act).__name__ for act in decision.acts]


def records(decision: Decision) -> list[dict[str, Any]]:
    return [act.fields for act in decision.acts if isinstance(act, Record)]


def commits(decision: Decision) -> list[str]:
    return [act.message for act in decision.acts if isinstance(act, Commit | Revert)]


def reason(decision: Decision) -> str:
    (give_up,) = [act for act in decision.acts if isinstance(act, GiveUp)]
    return give_up.reason


# --- the iteration budget ------------------------------------------------------------------


def test_a_generation_and_a_repair_within_budget_proceed() -> None:
    assert decide(state(), RepairDue()).action == "proceed"
    assert decide(state(iteration=4), RepairDue()).action == "proceed"  # 3 repairs used of 4


def test_a_module_out_of_repairs_gives_up_without_asking() -> None:
    before = state(iteration=3, limits=Limits(max_iterations=2))
    before.open_failures = [outcome("l1.physics", False, scope="physics")]
    decision = decide(before, RepairDue())
    assert decision.action == "give_up" and kinds(decision) == ["GiveUp"]
    assert reason(decision) == (
        "iteration budget: 2 repairs of module physics did not make it pass "
        "(--max-iterations 2); last failure: l1.physics: expected 1, got 0"
    )


def test_the_whole_port_is_budgeted_per_failing_level() -> None:
    failing = [outcome("l2", True, level="l2"), outcome("l3", False, level="l3")]
    composed = state(phase="composed", iteration=5, open_failures=failing)
    composed.limits.max_iterations = 2
    composed.level_repairs = {"l3": 1, "l2": 9}
    assert decide(composed, RepairDue()).action == "proceed"
    composed.level_repairs["l3"] = 2
    assert "2 repairs of level l3" in reason(decide(composed, RepairDue()))


# --- the plan ------------------------------------------------------------------------------


def test_no_usable_plan_gives_up() -> None:
    decision = decide(state(phase="plan", modules=[]), Planned(None, "no toml block"))
    assert decision.action == "give_up"
    assert reason(decision) == "no usable module plan: no toml block"


def test_a_plan_is_recorded_committed_and_the_modules_follow() -> None:
    modules = [ModuleSpec(name="a"), ModuleSpec(name="b")]
    decision = decide(state(phase="plan", modules=[]), Planned(Plan(entry="b", modules=modules)))
    assert decision.action == "plan" and kinds(decision) == ["Record", "Commit", "Complete", "Note"]
    assert decision.state.phase == "modules" and decision.state.entry == "b"
    assert [m.name for m in decision.state.modules] == ["a", "b"]
    assert commits(decision) == ["plan: a, b"]
    assert records(decision)[0]["decision"] == "plan"


# --- the first check of the whole port -----------------------------------------------------


def test_a_whole_port_that_passes_at_once_is_verified() -> None:
    decision = decide(state(phase="composed"), ComposedChecked([outcome("l3", True)]))
    assert decision.action == "verified" and kinds(decision) == ["Complete", "Finish"]
    done = decision.state
    assert (done.phase, done.status, done.reason) == ("done", "verified", "every level passes")
    assert done.composed_checked and done.results["l3"].passed


def test_a_whole_port_that_fails_is_repaired_and_its_divergence_counted_once() -> None:
    failing = outcome("l3", False, signature="l3|ep0/st4|reward")
    decision = decide(state(phase="composed"), ComposedChecked([outcome("l2", True), failing]))
    assert decision.action == "repair" and kinds(decision) == ["Record", "Complete"]
    nxt = decision.state
    assert nxt.iteration == 1 and [o.name for o in nxt.open_failures] == ["l3"]
    assert nxt.stuck == StuckState(signature="l3|ep0/st4|reward", count=1)
    assert records(decision) == [{"decision": "repair", "why": "l2 pass, l3 FAIL"}]


# --- an unusable answer --------------------------------------------------------------------


def test_an_unusable_answer_spends_the_iteration_and_says_why() -> None:
    decision = decide(state(), Unusable("no fenced code block"))
    assert decision.action == "unusable_answer"
    assert kinds(decision) == ["Commit", "Record", "Note", "Complete"]
    assert commits(decision) == ["generate physics iter 0: answer unusable"]
    nxt = decision.state
    assert nxt.iteration == 1
    assert nxt.notes == ["Your answer in iteration 0 was not applied: no fenced code block"]
    # A module never written is still owed: its absence is the open failure.
    (owed,) = nxt.open_failures
    assert (
        owed.signature == "module:physics|unwritten" and "has not been written" in owed.failures[0]
    )
    assert nxt.history == ["iteration 0: answer unusable (no fenced code block)"]


def test_an_unusable_repair_of_the_whole_port_counts_against_its_level() -> None:
    failing = [outcome("l2", False, level="l2", signature="s")]
    before = state(phase="composed", iteration=1, open_failures=failing)
    decision = decide(before, Unusable("bad"))
    assert decision.state.level_repairs == {"l2": 1}
    assert decision.state.open_failures == failing  # the real failure stays the open one
    assert commits(decision) == ["repair composed iter 1: answer unusable"]


# --- after an edit was checked -------------------------------------------------------------


def test_an_edit_that_breaks_a_check_that_passed_before_is_reverted() -> None:
    before = state(module_index=1, iteration=1)
    before.results = {"l1.physics": outcome("l1.physics", True, scope="physics")}
    broke = outcome("l1.physics", False, scope="physics")
    scope = [outcome("module:env", True, level="module")]
    decision = decide(before, Checked(scope=scope, outcomes=[*scope, broke]))
    assert decision.action == "revert"
    assert kinds(decision) == ["Commit", "Revert", "Record", "Note", "Complete"]
    assert commits(decision) == [
        "repair env iter 1: module:env pass, l1.physics FAIL; breaks l1.physics -> reverted",
        "revert repair env iter 1: it broke l1.physics, which passed before",
    ]
    assert records(decision)[0]["broke"] == ["l1.physics"]
    nxt = decision.state
    assert nxt.results["l1.physics"].passed  # the baseline keeps the version that passed
    assert "module:env" not in nxt.results
    assert nxt.iteration == 2 and "was reverted because it made l1.physics fail" in nxt.notes[0]
    assert "l1.physics: expected 1, got 0" in nxt.notes[0]


def test_a_check_that_failed_before_and_still_fails_is_no_regression() -> None:
    before = state(iteration=1)
    before.results = {"l1.physics": outcome("l1.physics", False, scope="physics")}
    failing = [outcome("l1.physics", False, scope="physics")]
    assert decide(before, Checked(scope=failing, outcomes=failing)).action == "repair"


def test_a_module_whose_checks_pass_is_accepted_and_the_next_one_follows() -> None:
    before = state(
        iteration=2, notes=["n"], history=["h"], stuck=StuckState(signature="x", count=2)
    )
    passed = [outcome("l1.physics", True, scope="physics")]
    decision = decide(before, Checked(scope=passed, outcomes=passed))
    assert decision.action == "accept" and kinds(decision) == ["Commit", "Record", "Complete"]
    assert commits(decision) == ["repair physics iter 2: l1.physics pass"]
    nxt = decision.state
    assert (nxt.module_index, nxt.iteration, nxt.phase) == (1, 0, "modules")
    assert nxt.notes == [] and nxt.history == [] and nxt.stuck == StuckState()
    assert nxt.results["l1.physics"].passed


def test_the_last_module_accepted_moves_to_the_whole_port() -> None:
    passed = [outcome("module:env", True, level="module")]
    decision = decide(state(module_index=1), Checked(scope=passed, outcomes=passed))
    assert decision.state.phase == "composed" and not decision.state.composed_checked
    assert commits(decision) == ["generate env iter 0: module:env pass"]


def test_a_repaired_whole_port_that_passes_is_verified() -> None:
    passed = [outcome("l3", True, level="l3")]
    before = state(phase="composed", iteration=1, composed_checked=True)
    decision = decide(before, Checked(scope=passed, outcomes=passed))
    assert decision.action == "verified"
    assert kinds(decision) == ["Commit", "Record", "Complete", "Finish"]
    assert decision.state.status == "verified" and decision.state.level_repairs == {"l3": 1}


def test_a_verified_port_with_optimize_rounds_goes_on_to_optimise() -> None:
    before = state(phase="composed", optimize=OptimizeSettings(rounds=2, batch_sizes=[8, 256]))
    decision = decide(before, ComposedChecked([outcome("l3", True)]))
    assert decision.action == "optimize" and kinds(decision) == ["Record", "Complete", "Note"]
    assert decision.state.phase == "optimize" and decision.state.status == "running"
    assert records(decision)[0]["why"] == "every level passes; 2 optimisation rounds follow"


def test_a_failing_edit_is_committed_and_repaired() -> None:
    failing = [outcome("module:env", False, level="module", signature="env|import")]
    decision = decide(state(module_index=1), Checked(scope=failing, outcomes=failing))
    assert decision.action == "repair" and kinds(decision) == ["Commit", "Record", "Complete"]
    assert commits(decision) == ["generate env iter 0: module:env FAIL"]
    nxt = decision.state
    assert nxt.iteration == 1 and nxt.open_failures == failing
    assert nxt.history == ["iteration 0: module:env: expected 1, got 0"]
    assert nxt.stuck == StuckState(signature="env|import", count=1)


# --- stuck ---------------------------------------------------------------------------------


def repeated(count: int, context_added: bool = False, signature: str = "env|import") -> Decision:
    """The same failure once more, after `count` times in a row already."""
    before = state(module_index=1, iteration=count, limits=Limits(stuck_after=3))
    before.stuck = StuckState(signature="env|import", count=count, context_added=context_added)
    failing = [outcome("module:env", False, level="module", signature=signature)]
    return decide(before, Checked(scope=failing, outcomes=failing))


def test_the_same_divergence_in_a_row_is_counted() -> None:
    decision = repeated(1)
    assert decision.action == "repair" and decision.state.stuck.count == 2


def test_a_different_divergence_starts_the_count_again() -> None:
    decision = repeated(2, signature="env|other")
    assert decision.state.stuck == StuckState(signature="env|other", count=1)


def test_stuck_adds_context_once() -> None:
    decision = repeated(2)
    assert decision.action == "add_context"
    assert kinds(decision) == ["Commit", "Record", "Record", "Complete"]
    assert records(decision)[-1] == {
        "decision": "add_context",
        "why": "the same divergence 3 times in a row",
    }
    assert decision.state.stuck.context_added and decision.state.status == "running"


def test_stuck_even_with_more_context_gives_up_after_completing_the_step() -> None:
    decision = repeated(2, context_added=True)
    assert decision.action == "stuck"
    # The step counts (its commit is the run's head), then the run gives up.
    assert kinds(decision) == ["Commit", "Record", "Complete", "Record", "GiveUp"]
    assert records(decision)[-1] == {"decision": "stuck", "signature": "env|import"}
    assert reason(decision) == (
        "stuck: the same divergence 3 times in a row, even with more context "
        "(module:env: expected 1, got 0)"
    )


def test_stuck_counts_unusable_answers_and_reverts_too() -> None:
    before = state(iteration=1, limits=Limits(stuck_after=2))
    before.open_failures = [outcome("module:physics", False, signature="p")]
    before.stuck = StuckState(signature="p", count=1)
    assert decide(before, Unusable("bad")).action == "add_context"


# --- budgets -------------------------------------------------------------------------------


def test_a_budget_that_ends_gives_up_at_the_last_completed_step() -> None:
    decision = decide(state(), BudgetEnded("budget exhausted: 1000 tokens"))
    assert decision.action == "give_up" and kinds(decision) == ["GiveUp"]
    assert reason(decision) == "budget exhausted: 1000 tokens"


def test_a_budget_that_ends_during_optimisation_ends_only_the_optimisation() -> None:
    before = optimizing(rounds_done=1)
    before.optimization.attempts = [
        OptimizeAttempt(round=1, kept=True, why="", batch=256, ratio=1.5)
    ]
    decision = decide(before, BudgetEnded("budget exhausted"))
    assert decision.action == "verified" and kinds(decision) == ["Complete", "Finish"]
    assert decision.state.reason == (
        "every level passes; 1 of 1 optimisation rounds kept, 1.50x the SPS at B=256; "
        "stopped: budget exhausted"
    )


# --- optimisation --------------------------------------------------------------------------


def optimizing(rounds: int = 3, **fields: Any) -> RunState:
    run = state(phase="optimize", optimize=OptimizeSettings(rounds=rounds, batch_sizes=[8, 256]))
    run.optimization.sps = {8: 100.0, 256: 1000.0}
    for name, value in fields.items():
        setattr(run.optimization, name, value)
    return run


def comparison(*sps: float, error: str | None = None, failed: int | None = None) -> Comparison:
    speeds = [PortSpeed(sps={8: value / 10, 256: value}) for value in sps]
    return Comparison(
        batch_sizes=[8, 256], steps=10, repeats=3, speeds=speeds, error=error, failed=failed
    )


def attempt_of(decision: Decision) -> OptimizeAttempt:
    (act,) = [act for act in decision.acts if isinstance(act, RecordAttempt)]
    assert decision.state.optimization.attempts[-1] == act.attempt
    return act.attempt


def test_the_first_optimisation_step_benches_the_verified_port() -> None:
    before = optimizing()
    before.optimization.sps = {}
    decision = decide(before, StartBenched(comparison(2000.0)))
    assert decision.action == "bench_started"
    assert kinds(decision) == ["WriteBenchReport", "Complete", "Note"]
    assert decision.state.optimization.sps == decision.state.optimization.start_sps
    assert decision.state.optimization.sps[256] == 2000.0


def test_a_verified_port_that_cannot_be_benched_is_verified_unoptimised() -> None:
    before = optimizing()
    before.optimization.sps = {}
    decision = decide(before, StartBenched(comparison(error="worker died", failed=0)))
    assert decision.action == "verified"
    assert decision.state.reason == "every level passes; not optimised: worker died"


def test_an_unusable_optimisation_answer_spends_its_round() -> None:
    decision = decide(optimizing(), Unusable("no code"))
    assert decision.action == "revert"
    assert kinds(decision) == [
        "Commit", "RecordAttempt", "Record", "WriteBenchReport", "Note", "Complete",
    ]  # fmt: skip
    assert commits(decision) == ["optimize round 1: answer unusable"]
    assert attempt_of(decision).why == "answer unusable (no code)"
    assert decision.state.optimization.rounds_done == 1 and decision.state.iteration == 1


def test_an_optimisation_that_changes_nothing_spends_its_round() -> None:
    decision = decide(optimizing(), Unchanged())
    assert commits(decision) == ["optimize round 1: no change"]
    assert decision.state.notes == ["Your answer in optimisation round 1 changed no file."]


def test_an_optimisation_that_breaks_a_level_is_reverted() -> None:
    broke = [outcome("load", False, level="load"), outcome("module:env", False)]
    decision = decide(optimizing(), Checked(scope=broke, outcomes=broke))
    assert decision.action == "revert"
    assert commits(decision) == [
        "optimize round 1: load FAIL, module:env FAIL; breaks load, module:env -> reverted",
        "revert optimize round 1: it broke load, module:env",
    ]
    assert attempt_of(decision).why == "it made load, module:env fail"
    assert "every level must still pass" in decision.state.notes[0]


def test_an_optimisation_whose_bench_fails_is_reverted() -> None:
    passed = [outcome("l3", True)]
    bench = comparison(1000.0, error="timed out", failed=1)
    decision = decide(optimizing(), Benched(passed, passed, bench))
    assert commits(decision)[-1] == "revert optimize round 1: the bench of the edited port failed"
    assert attempt_of(decision).why == "the bench of the edited port failed: timed out"


def test_a_faster_optimisation_is_kept() -> None:
    passed = [outcome("l3", True)]
    decision = decide(optimizing(), Benched(passed, passed, comparison(1000.0, 1100.0)))
    assert decision.action == "keep"
    attempt = attempt_of(decision)
    assert attempt.kept and attempt.ratio == 1.1
    (message,) = commits(decision)
    assert message.startswith("optimize round 1: l3 pass; SPS at B=256: ")
    assert message.endswith("(1.10x) -> kept")
    assert records(decision) == [{"decision": "keep", "why": attempt.why}]
    assert decision.state.optimization.sps[256] == 1100.0 and decision.state.results["l3"].passed


def test_an_optimisation_below_the_minimum_gain_is_reverted_and_the_new_figures_kept() -> None:
    passed = [outcome("l3", True)]
    decision = decide(optimizing(), Benched(passed, passed, comparison(900.0, 940.0)))
    assert decision.action == "revert" and not attempt_of(decision).kept
    assert [type(a) for a in decision.acts[:2]] == [Commit, Revert]
    assert attempt_of(decision).why.endswith("below the 1.05x needed")
    # The current port stays; its figures are the ones just measured beside the edit.
    assert decision.state.optimization.sps[256] == 900.0
    assert "below the 1.05x needed to keep it" in decision.state.notes[0]


def test_the_last_optimisation_round_verifies_the_run() -> None:
    passed = [outcome("l3", True)]
    before = optimizing(rounds=2, rounds_done=1)
    decision = decide(before, Benched(passed, passed, comparison(1000.0, 2000.0)))
    assert decision.action == "verified" and kinds(decision)[-2:] == ["Complete", "Finish"]
    assert decision.state.reason == (
        "every level passes; 1 of 2 optimisation rounds kept, 2.00x the SPS at B=256"
    )


# --- purity --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "before, seen",
    [
        (state(iteration=1), Unusable("x")),
        (state(iteration=1), Checked(scope=[outcome("a", False)], outcomes=[outcome("a", False)])),
        (state(phase="composed"), ComposedChecked([outcome("l3", True)])),
        (optimizing(), Benched([], [], comparison(1.0, 2.0))),
        (optimizing(), BudgetEnded("x")),
    ],
)
def test_decide_never_changes_the_state_it_is_given(before: RunState, seen: Any) -> None:
    copy = before.model_copy(deep=True)
    decision = decide(before, seen)
    assert before == copy and decision.state is not before
