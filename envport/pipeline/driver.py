"""The closed loop: plan, generate each module, check, repair, then check the whole port.

Only this module knows the order of phases. One call of `Driver.step` is one step: ask the
model (if the step needs it), write the edits, run the checks, decide, commit, save the run
state. A step works on a copy of the state and replaces it only when it completes, so an
interrupt or a kill always leaves `run.json` at a step boundary, matched by the git commit
in `state.head`; running the step again renders the same prompts and the response cache
answers them without a new paid call.

Decisions:
  - a check that passed before and fails after an edit means the edit is reverted (the
    regression guard), and the next prompt says why;
  - the same divergence N times in a row (`limits.stuck_after`) is stuck: the next repair
    prompt gets more context (the whole port, the history of attempts) once, and if that
    does not move it either the run stops with a report instead of spending more;
  - iterations per module and per level, tokens, dollars and wall time are budgets; the
    run gives up cleanly when one ends;
  - with `--optimize`, a verified port gets optimisation rounds: an edit is kept only when
    every level still passes and SPS at the largest batch improves by `min_gain` (5%),
    otherwise it is reverted like a regression and the next prompt says why. A budget that
    ends during optimisation ends the optimisation, never the verified run.
"""

from __future__ import annotations

import asyncio
import hashlib
import signal
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

from envport import interrupts
from envport.llm import AccountedModel, Budget, Message, Model, ModelRequest, Purpose
from envport.llm.budget import BudgetExhausted, WallTimeExhausted
from envport.llm.cache import write_atomically
from envport.llm.failures import printable
from envport.llm.types import ModelResponse
from envport.pipeline.checks import CheckCache, CheckRun, check_composed, check_module
from envport.pipeline.optimize import (
    BenchCache,
    Comparison,
    kept_gain,
    outcome_lines,
    ratio_text,
    snapshot,
    write_bench_report,
)
from envport.pipeline.plan import parse_plan
from envport.pipeline.progress import Progress
from envport.pipeline.prompting import PromptBuilder
from envport.repair.apply import apply_edits, read_files
from envport.repair.edits import EditParseError, ParsedAnswer, parse_answer
from envport.runs.history import History
from envport.runs.journal import Journal, Spending
from envport.runs.layout import RunDir, RunLock
from envport.runs.spec_copy import write_planned_spec
from envport.runs.state import COMPOSED, CheckOutcome, OptimizeAttempt, RunState, StuckState
from envport.serve.lag import LagMonitor
from envport.spec import PortSpec, load_spec

T = TypeVar("T")
TEMPERATURE = 0.0
#: How a run that ran out of wall time says so (translate's resume line looks for it).
WALL_TIME = "wall-time budget"


def _summary(outcomes: list[CheckOutcome]) -> str:
    shown = [o for o in outcomes if not (o.level == "load" and o.passed)]
    return ", ".join(f"{o.name} {'pass' if o.passed else 'FAIL'}" for o in shown) or "no checks"


def _signature(failures: list[CheckOutcome]) -> str:
    return " || ".join(sorted(o.signature or o.name for o in failures if not o.passed))


def _optimized(state: RunState) -> str:
    """The verified run's reason after optimisation: what it gained, at the largest batch."""
    progress = state.optimization
    kept = sum(attempt.kept for attempt in progress.attempts)
    done = f"{kept} of {progress.rounds_done} optimisation rounds kept"
    gain = kept_gain(state)
    if gain is not None:
        done += f", {gain:.2f}x the SPS at B={state.optimize.largest}"
    return f"every level passes; {done}"


def _first_line(outcome: CheckOutcome) -> str:
    text = outcome.failures[0] if outcome.failures else "failed"
    return text.splitlines()[0] if text else "failed"


class Driver:
    def __init__(
        self,
        run: RunDir,
        state: RunState,
        spec: PortSpec,
        model: Model,
        builder: PromptBuilder,
        progress: Progress,
    ) -> None:
        self.run = run
        self.state = state
        self.spec = spec
        self.builder = builder
        self.progress = progress
        self.journal = Journal(run.transcript)
        self.history = History(run.root)
        # What earlier sessions paid is in the journal, including calls a kill cut short.
        self.spending = Spending.from_journal(run.transcript)
        limits = state.limits
        capped = limits.max_usd is not None or limits.max_tokens is not None
        # No caps, no Budget: the model layer then has nothing to price (and nothing to warn
        # about for a model without a price).
        self.budget = (
            Budget(
                max_usd=limits.max_usd,
                max_tokens=limits.max_tokens,
                spent_usd=self.spending.cost_usd,
                spent_tokens=self.spending.usage.total,
            )
            if capped
            else None
        )
        self.model = AccountedModel(
            model,
            cache_dir=run.cache,
            budget=self.budget,
            journal=self.journal,
            time_left=self._time_left,
        )
        self.checks = CheckCache(run.cache / "checks")
        self.benches = BenchCache(run.cache / "bench")
        self.session_started = time.monotonic()
        self.base_elapsed = state.elapsed_s
        self._runner: asyncio.Runner | None = None
        self.lag = LagMonitor(interval=0.005)
        # The stable prefix is journaled once per session, prompts refer to it by hash.
        self._journaled_prefixes: set[str] = set()

    def _journal_lag(self) -> None:
        """The session's event-loop lag during model calls, summarised once at the end."""
        if self.lag.lags:
            self.journal.write("event_loop_lag", **self.lag.summary().model_dump())

    async def _watched(self, call: Awaitable[T]) -> T:
        """Await a model call with the lag monitor running: the loop must stay responsive
        while the model layer does its own disk and network work."""
        self.lag.start()
        try:
            return await call
        finally:
            await self.lag.stop()

    # --- session ---------------------------------------------------------------------------

    def run_until_done(self) -> RunState:
        """Take steps until the run is verified or gives up; interrupts propagate."""
        lock = RunLock(self.run.root)
        lock.acquire()
        try:
            self._begin()
        except BaseException:
            lock.release()
            raise
        self._runner = asyncio.Runner()
        interrupts.settle_in(self._runner.get_loop())
        try:
            while not self.state.finished:
                interrupts.check()
                if self._out_of_time():
                    break
                try:
                    self.step()
                except BudgetExhausted as error:
                    self._give_up(str(error))
                except WallTimeExhausted as error:
                    # Given up at the last completed step: the cancelled call was never
                    # answered, so a resume asks it again and pays for nothing twice.
                    self._give_up(f"{self._wall_time_used()}; {error}")
        except BaseException as error:
            signum = interrupts.received()
            if signum is None and not isinstance(error, KeyboardInterrupt):
                first = str(error).splitlines()[0] if str(error) else repr(error)
                self._halt("stopped", printable(first))
                raise
            # After the user's interrupt, whatever else broke (a git process the same Ctrl-C
            # ended) is the interrupt too: the step is not done and runs again on resume.
            self._halt("interrupted", interrupts.describe(signum))
            if isinstance(error, KeyboardInterrupt):
                raise
            raise interrupts.Interrupted(signum or signal.SIGINT) from None
        finally:
            self._runner.close()
            self.progress.stop()
            lock.release()
        return self.state

    def _begin(self) -> None:
        state = self.state
        # Whatever a killed step left half-written goes; the step runs again from its start.
        self.history.reset(state.head)
        self.run.port.mkdir(exist_ok=True)  # git keeps no empty directories
        event = "run_started" if state.sessions == 0 else "resumed"
        state.sessions += 1
        state.status = "running"
        state.reason = ""
        self.journal.write(
            event,
            step=state.step,
            run_id=state.run_id,
            spec=state.spec_name,
            target=state.target,
            model=state.model,
            phase=state.phase,
            scope=state.scope,
            iteration=state.iteration,
        )
        self._save(state)
        self.progress.start(state)
        self._note(f"{event.replace('_', ' ')} at step {state.step} with {state.model}")

    def _out_of_time(self) -> bool:
        limit = self.state.limits.max_minutes
        if limit is not None and self._elapsed() > limit * 60:
            self._give_up(self._wall_time_used())
            return True
        return False

    def _wall_time_used(self) -> str:
        return f"{WALL_TIME} of {self.state.limits.max_minutes:g} minutes used up"

    def _time_left(self) -> float | None:
        """Seconds a model call may still take before --max-minutes is up."""
        limit = self.state.limits.max_minutes
        return None if limit is None else limit * 60 - self._elapsed()

    def _elapsed(self) -> float:
        return self.base_elapsed + time.monotonic() - self.session_started

    def _save(self, state: RunState) -> None:
        state.elapsed_s = round(self._elapsed(), 3)
        state.usage = self.spending.usage
        state.cost_usd = round(self.spending.cost_usd, 6)
        state.paid_calls = self.spending.paid_calls
        state.cached_calls = self.spending.cached_calls
        self.run.save(state)

    def _complete(self, nxt: RunState) -> None:
        """A step is done: it counts, and the state that describes it becomes the run's."""
        nxt.step = self.state.step + 1
        nxt.head = self.history.head
        self._save(nxt)
        self.state = nxt

    def _halt(self, status: str, reason: str) -> None:
        # The last completed step's state, so a resume repeats the interrupted step.
        self.state.status = status  # type: ignore[assignment]
        self.state.reason = reason
        self._save(self.state)
        self.journal.write(status, step=self.state.step, reason=reason)

    def _give_up(self, reason: str) -> None:
        if self.state.phase == "optimize":
            # The port passed every level before optimisation began and the port on disk is
            # the last kept version: a budget ending now ends the optimisation only.
            self._verified(
                self.state.model_copy(deep=True), f"{_optimized(self.state)}; stopped: {reason}"
            )
            return
        self.state.status = "gave_up"
        self.state.reason = reason
        self._save(self.state)
        self._journal_lag()
        self.journal.write("finished", step=self.state.step, status="gave_up", reason=reason)
        self._note(f"gave up: {reason}")
        self._write_outcome()

    def _commit(self, message: str) -> str:
        sha = self.history.commit(message)
        self.journal.write("commit", step=self.state.step, sha=sha, message=message)
        return sha

    def _note(self, text: str) -> None:
        self.progress.event(self.state, text)

    # --- one step --------------------------------------------------------------------------

    def step(self) -> None:
        state = self.state
        self.checks.step = state.step
        if state.phase == "plan":
            self._plan()
        elif state.phase == "composed" and not state.composed_checked:
            self._first_composed_check()
        elif state.phase in ("modules", "composed"):
            self._model_step()
        elif state.phase == "optimize":
            self._optimize_step()

    def _plan(self) -> None:
        state = self.state
        nxt = state.model_copy(deep=True)
        purpose = Purpose(phase="plan", iteration=0)
        plan, error = self._ask(
            state,
            purpose,
            self.builder.plan(state),
            lambda text: parse_plan(text, state.target),
            required=[],
            plan=True,
        )
        if plan is None:
            self._give_up(f"no usable module plan: {error}")
            return
        nxt.modules = plan.modules
        nxt.entry = plan.entry
        nxt.phase = "modules"
        write_planned_spec(self.run.spec_file, self.spec, state.target, plan.entry, plan.modules)
        names = ", ".join(m.name for m in plan.modules)
        self.journal.write(
            "decision",
            step=state.step,
            decision="plan",
            modules=[m.model_dump() for m in plan.modules],
            entry=plan.entry,
        )
        self._commit(f"plan: {names}")
        self._complete(nxt)
        self._note(f"planned modules {names}")

    def _first_composed_check(self) -> None:
        state = self.state
        nxt = state.model_copy(deep=True)
        self._note("checking the whole port")
        run = self._check(
            state, check_composed(self.run.root, self.run.port, state.target, self.checks)
        )
        nxt.composed_checked = True
        nxt.results.update({o.name: o for o in run.outcomes})
        if run.passed:
            self._verified(nxt)
            return
        nxt.iteration = 1
        nxt.open_failures = [o for o in run.outcomes if not o.passed]
        nxt.stuck = StuckState(signature=_signature(nxt.open_failures), count=1)
        self.journal.write(
            "decision", step=state.step, decision="repair", why=_summary(run.outcomes)
        )
        self._complete(nxt)

    def _repair_key(self, state: RunState) -> str:
        if state.phase == "modules":
            return state.scope
        # Composed repairs are budgeted per level: the first failing level is the one repaired.
        return next((o.level for o in state.open_failures if not o.passed), "l3")

    def _model_step(self) -> None:
        state = self.state
        scope = state.scope
        kind = "generate" if state.phase == "modules" and state.iteration == 0 else "repair"
        key = self._repair_key(state)
        if kind == "repair":
            used = (
                state.iteration - 1 if state.phase == "modules" else state.level_repairs.get(key, 0)
            )
            if used >= state.limits.max_iterations:
                where = f"module {scope}" if state.phase == "modules" else f"level {key}"
                last = _first_line(state.open_failures[0]) if state.open_failures else "none"
                self._give_up(
                    f"iteration budget: {used} repairs of {where} did not make it pass "
                    f"(--max-iterations {state.limits.max_iterations}); last failure: {last}"
                )
                return
        purpose = Purpose(
            phase=kind, module=None if scope == COMPOSED else scope, iteration=state.iteration
        )
        files = read_files(self.run.port)
        if kind == "generate":
            task, required = self.builder.generate(state, files)
        else:
            task = self.builder.repair(state, files)
            # A module whose generation failed is still owed whole.
            owed = f"{scope}.py"
            required = [owed] if state.phase == "modules" and owed not in files else []
        parsed, error = self._ask(
            state,
            purpose,
            task,
            lambda text: parse_answer(text, self.run.port, required),
            required=required,
        )

        nxt = state.model_copy(deep=True)
        nxt.notes = []
        if state.phase == "composed":
            nxt.level_repairs[key] = nxt.level_repairs.get(key, 0) + 1
        label = f"{kind} {scope} iter {state.iteration}"
        if parsed is None:
            self._unusable_answer(state, nxt, label, error or "unparseable")
            return
        applied = apply_edits(self.run.port, parsed.files)
        for edit in applied:
            self.journal.write(
                "edit", step=state.step, path=edit.path, created=edit.created, diff=edit.diff
            )
        self._save_tests(state, parsed)
        touched = {edit.path for edit in applied if edit.changed}
        self._note("edited " + (", ".join(e.stat() for e in applied if e.changed) or "nothing"))
        runs = self._run_checks(state, touched)
        outcomes = [o for run in runs for o in run.outcomes]
        regressions = [
            o
            for o in outcomes
            if not o.passed and o.name in state.results and state.results[o.name].passed
        ]
        if regressions:
            self._revert(state, nxt, label, outcomes, regressions)
            return
        nxt.results.update({o.name: o for o in outcomes})
        scope_run = runs[0]
        self._commit(f"{label}: {_summary(scope_run.outcomes)}")
        if scope_run.passed:
            self.journal.write(
                "decision", step=state.step, decision="accept", why=_summary(scope_run.outcomes)
            )
            self._advance(nxt)
            return
        nxt.open_failures = [o for o in scope_run.outcomes if not o.passed]
        nxt.history.append(f"iteration {state.iteration}: {_first_line(nxt.open_failures[0])}")
        nxt.iteration += 1
        self.journal.write(
            "decision",
            step=state.step,
            decision="repair",
            why=_summary(scope_run.outcomes),
        )
        self._account_stuck(nxt)

    # --- decisions -------------------------------------------------------------------------

    def _unusable_answer(self, state: RunState, nxt: RunState, label: str, error: str) -> None:
        """Two unusable answers in a row: the iteration is spent, the model is told why."""
        nxt.notes.append(f"Your answer in iteration {state.iteration} was not applied: {error}")
        if not nxt.open_failures:
            module = state.scope
            nxt.open_failures = [
                CheckOutcome(
                    name=f"module:{module}",
                    scope=module,
                    level="module",
                    passed=False,
                    failures=[f"`{module}.py` has not been written: the answer was unusable"],
                    signature=f"module:{module}|unwritten",
                )
            ]
        nxt.history.append(f"iteration {state.iteration}: answer unusable ({error})")
        nxt.iteration += 1
        self._commit(f"{label}: answer unusable")
        self.journal.write("decision", step=state.step, decision="unusable_answer", why=error)
        self._note(f"answer unusable: {error}")
        self._account_stuck(nxt)

    def _revert(
        self,
        state: RunState,
        nxt: RunState,
        label: str,
        outcomes: list[CheckOutcome],
        regressions: list[CheckOutcome],
    ) -> None:
        broken = ", ".join(o.name for o in regressions)
        self._commit(f"{label}: {_summary(outcomes)}; breaks {broken} -> reverted")
        message = f"revert {label}: it broke {broken}, which passed before"
        sha = self.history.revert_head(message)
        self.journal.write("commit", step=state.step, sha=sha, message=message)
        first = regressions[0]
        detail = first.failures[0] if first.failures else "it failed"
        nxt.notes.append(
            f"Your edit in iteration {state.iteration} was reverted because it made {broken} "
            f"fail, which passed before. The files are back as they were. What broke:\n{detail}"
        )
        nxt.history.append(f"iteration {state.iteration}: reverted, it broke {broken}")
        nxt.iteration += 1
        self.journal.write(
            "decision",
            step=state.step,
            decision="revert",
            broke=[o.name for o in regressions],
            why=f"{broken} passed before this edit and fails after it",
        )
        self._note(f"reverted: the edit broke {broken}")
        self._account_stuck(nxt)

    def _account_stuck(self, nxt: RunState) -> None:
        """Count the same divergence in a row; add context once, then stop."""
        signature = _signature(nxt.open_failures)
        if signature == nxt.stuck.signature:
            nxt.stuck.count += 1
        else:
            nxt.stuck = StuckState(signature=signature, count=1)
        limit = nxt.limits.stuck_after
        if nxt.stuck.count >= limit and nxt.stuck.context_added:
            self._complete(nxt)
            self.journal.write(
                "decision", step=self.state.step, decision="stuck", signature=signature
            )
            self._give_up(
                f"stuck: the same divergence {nxt.stuck.count} times in a row, even with more "
                f"context ({_first_line(nxt.open_failures[0])})"
            )
            return
        if nxt.stuck.count >= limit:
            nxt.stuck.context_added = True
            self.journal.write(
                "decision",
                step=self.state.step,
                decision="add_context",
                why=f"the same divergence {nxt.stuck.count} times in a row",
            )
        self._complete(nxt)

    def _advance(self, nxt: RunState) -> None:
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
            self._complete(nxt)
            return
        self._verified(nxt)

    def _verified(self, nxt: RunState, reason: str = "every level passes") -> None:
        if nxt.optimize.rounds and nxt.phase != "optimize":
            self._start_optimizing(nxt)
            return
        nxt.phase = "done"
        nxt.status = "verified"
        nxt.reason = reason
        self._complete(nxt)
        self._journal_lag()
        self.journal.write("finished", step=nxt.step, status="verified")
        self._note(f"verified: {reason}")
        self._write_outcome()

    # --- optimisation ----------------------------------------------------------------------

    def _start_optimizing(self, nxt: RunState) -> None:
        """Every level passes: the port is verified, and --optimize asks for speed next."""
        nxt.phase = "optimize"
        nxt.iteration = 0
        nxt.open_failures, nxt.notes, nxt.history = [], [], []
        nxt.stuck = StuckState()
        self.journal.write(
            "decision",
            step=self.state.step,
            decision="optimize",
            why=f"every level passes; {nxt.optimize.rounds} optimisation rounds follow",
        )
        self._complete(nxt)
        self._note(f"every level passes; optimising ({nxt.optimize.rounds} rounds)")

    def _optimize_step(self) -> None:
        # The first prompt's numbers are measured in a step of their own and kept in the run
        # state, so a round run again after a kill renders the same prompt (cache hit).
        if not self.state.optimization.sps:
            self._bench_start()
        else:
            self._optimize_round()

    def _spec_now(self) -> PortSpec:
        """The run's frozen spec as it is now (it gains the module plan, if one was made)."""
        return load_spec(self.run.spec_file)

    def _bench_start(self) -> None:
        state = self.state
        nxt = state.model_copy(deep=True)
        self._note(f"benching the verified port at B={state.optimize.batch_sizes}")
        comparison, cached = self.benches.measure(
            state.step, self._spec_now(), state.target, [self.run.port], state.optimize
        )
        speed = comparison.speeds[0] if comparison.speeds else None
        self.journal.write(
            "optimize_bench",
            step=state.step,
            batch_sizes=comparison.batch_sizes,
            steps=comparison.steps,
            repeats=comparison.repeats,
            sps=speed.sps if speed else {},
            runs=speed.runs if speed else {},
            loops=speed.loop if speed else {},
            error=comparison.error,
            seconds=comparison.seconds,
            cached=cached,
        )
        if speed is None:
            self._verified(nxt, f"every level passes; not optimised: {comparison.error}")
            return
        nxt.optimization.sps = dict(speed.sps)
        nxt.optimization.start_sps = dict(speed.sps)
        write_bench_report(self.run.reports, nxt, state.spec_source)
        self._complete(nxt)
        largest = state.optimize.largest
        self._note(f"SPS at B={largest}: {speed.sps[largest]:,.0f}")

    def _optimize_round(self) -> None:
        state = self.state
        settings = state.optimize
        number = state.optimization.rounds_done + 1
        label = f"optimize round {number}"
        purpose = Purpose(phase="optimize", iteration=number)
        parsed, error = self._ask(
            state,
            purpose,
            self.builder.optimize(state, read_files(self.run.port)),
            lambda text: parse_answer(text, self.run.port, []),
            required=[],
        )
        nxt = state.model_copy(deep=True)
        nxt.notes = []
        nxt.iteration = number
        nxt.optimization.rounds_done = number
        attempt = OptimizeAttempt(
            round=number,
            kept=False,
            why="",
            batch=settings.largest,
            sps_before=dict(state.optimization.sps),
        )
        if parsed is None:
            attempt.why = f"answer unusable ({error})"
            nxt.notes.append(f"Your answer in optimisation round {number} was not applied: {error}")
            self._commit(f"{label}: answer unusable")
            self._end_round(state, nxt, attempt)
            return
        # The current port, copied before the edit: the bench runs both side by side.
        current = snapshot(self.run.port, self.run.cache / "optimize" / "current")
        applied = apply_edits(self.run.port, parsed.files)
        for edit in applied:
            self.journal.write(
                "edit", step=state.step, path=edit.path, created=edit.created, diff=edit.diff
            )
        self._save_tests(state, parsed)
        touched = {edit.path for edit in applied if edit.changed}
        if not touched:
            attempt.why = "the answer changed no file"
            nxt.notes.append(f"Your answer in optimisation round {number} changed no file.")
            self._commit(f"{label}: no change")
            self._end_round(state, nxt, attempt)
            return
        self._note("edited " + ", ".join(e.stat() for e in applied if e.changed))
        # Every check that could change runs again; in this phase all passed, so any failure
        # is a regression.
        runs = self._run_checks(state, touched)
        outcomes = [o for run in runs for o in run.outcomes]
        failed = [o for o in outcomes if not o.passed]
        if failed:
            broken = ", ".join(o.name for o in failed)
            detail = failed[0].failures[0] if failed[0].failures else "it failed"
            attempt.why = f"it made {broken} fail"
            nxt.notes.append(
                f"Your optimisation in round {number} was reverted because it made {broken} "
                f"fail; every level must still pass. The files are back as they were. "
                f"What broke:\n{detail}"
            )
            self._revert_attempt(
                state, label, f"{_summary(outcomes)}; breaks {broken}", f"it broke {broken}"
            )
            self._end_round(state, nxt, attempt)
            return
        self._note("benching the edited port against the current one")
        comparison, cached = self.benches.measure(
            state.step, self._spec_now(), state.target, [current, self.run.port], settings
        )
        threshold = 1 + settings.min_gain
        largest = settings.largest
        if comparison.error is not None:
            which = "the edited port" if comparison.failed == 1 else "the current port"
            attempt.why = f"the bench of {which} failed: {comparison.error}"
            nxt.notes.append(
                f"Your optimisation in round {number} was reverted because the bench of "
                f"{which} failed: {comparison.error}. The files are back as they were."
            )
            self._revert_attempt(state, label, "bench failed", f"the bench of {which} failed")
        else:
            before, after = comparison.speeds[0].sps, comparison.speeds[1].sps
            attempt.sps_before, attempt.sps_after = dict(before), dict(after)
            ratio = after[largest] / before[largest]
            attempt.ratio = round(ratio, 4)
            figures = ratio_text(attempt)
            if ratio >= threshold:
                attempt.kept = True
                attempt.why = f"every level passes and {figures}, at least {threshold:.2f}x"
                nxt.results.update({o.name: o for o in outcomes})
                nxt.optimization.sps = dict(after)
                self._commit(f"{label}: {_summary(runs[0].outcomes)}; {figures} -> kept")
            else:
                attempt.why = f"{figures}, below the {threshold:.2f}x needed"
                # The current port stays, and its numbers are the ones just measured.
                nxt.optimization.sps = dict(before)
                nxt.notes.append(
                    f"Your optimisation in round {number} was reverted: every level still "
                    f"passed, but {figures} against the current port, below the "
                    f"{threshold:.2f}x needed to keep it. The files are back as they were."
                )
                self._revert_attempt(
                    state,
                    label,
                    f"{_summary(runs[0].outcomes)}; {figures}",
                    f"{figures}, below {threshold:.2f}x",
                )
        self._end_round(state, nxt, attempt, comparison, cached)

    def _revert_attempt(self, state: RunState, label: str, summary: str, why: str) -> None:
        """The attempt and its undoing both stay in the history, as with the regression guard."""
        self._commit(f"{label}: {summary} -> reverted")
        message = f"revert {label}: {why}"
        sha = self.history.revert_head(message)
        self.journal.write("commit", step=state.step, sha=sha, message=message)

    def _end_round(
        self,
        state: RunState,
        nxt: RunState,
        attempt: OptimizeAttempt,
        comparison: Comparison | None = None,
        cached: bool = False,
    ) -> None:
        nxt.optimization.attempts.append(attempt)
        speeds = comparison.speeds if comparison is not None else []
        self.journal.write(
            "optimize_attempt",
            step=state.step,
            round=attempt.round,
            kept=attempt.kept,
            why=attempt.why,
            batch=attempt.batch,
            sps_before=attempt.sps_before,
            sps_after=attempt.sps_after,
            ratio=attempt.ratio,
            min_ratio=1 + state.optimize.min_gain,
            # Every timed run of both versions: the spread shows how noisy the machine was.
            runs_before=speeds[0].runs if speeds else {},
            runs_after=speeds[1].runs if len(speeds) > 1 else {},
            bench_error=comparison.error if comparison is not None else None,
            bench_seconds=comparison.seconds if comparison is not None else 0.0,
            cached=cached,
        )
        self.journal.write(
            "decision",
            step=state.step,
            decision="keep" if attempt.kept else "revert",
            why=attempt.why,
        )
        write_bench_report(self.run.reports, nxt, state.spec_source)
        self._note(f"round {attempt.round} {'kept' if attempt.kept else 'reverted'}: {attempt.why}")
        if attempt.round >= state.optimize.rounds:
            self._verified(nxt, _optimized(nxt))
        else:
            self._complete(nxt)

    # --- model calls -----------------------------------------------------------------------

    def _request(self, state: RunState, purpose: Purpose, messages: list[Message]) -> ModelRequest:
        return ModelRequest(
            system=self.builder.system(),
            stable_prefix=self.builder.context(state),
            messages=messages,
            max_tokens=state.limits.answer_tokens,
            temperature=TEMPERATURE,
            purpose=purpose,
        )

    def _call(self, state: RunState, request: ModelRequest) -> ModelResponse:
        prefix_sha = hashlib.sha256(request.stable_prefix.encode()).hexdigest()
        if prefix_sha not in self._journaled_prefixes:
            self._journaled_prefixes.add(prefix_sha)
            self.journal.write(
                "context", step=state.step, sha256=prefix_sha, text=request.stable_prefix
            )
        self.journal.write(
            "prompt",
            step=state.step,
            purpose=request.purpose.model_dump(),
            system=request.system,
            stable_prefix_sha256=prefix_sha,
            messages=[m.model_dump() for m in request.messages],
            max_tokens=request.max_tokens,
        )
        self._note(f"asking {self.model.name} ({request.purpose.label()})")
        assert self._runner is not None
        recorded = len(self.model.ledger.calls)
        try:
            response = self._runner.run(self._watched(self.model.complete(request)))
        finally:
            # Every record the call left, answered or refused as malformed: all were paid.
            for call in self.model.ledger.calls[recorded:]:
                self.spending.add(call.model_dump(mode="json"))
        self.journal.write(
            "answer",
            step=state.step,
            purpose=request.purpose.model_dump(),
            text=response.text,
            stop_reason=response.stop_reason,
            cached=response.cached,
            model=response.model,
        )
        return response

    def _ask(
        self,
        state: RunState,
        purpose: Purpose,
        task: str,
        parse: Callable[[str], T],
        *,
        required: list[str],
        plan: bool = False,
    ) -> tuple[T | None, str | None]:
        """Ask; an unusable answer gets one re-ask that quotes the parse error."""
        messages = [Message(role="user", text=task)]
        response = self._call(state, self._request(state, purpose, messages))
        try:
            return parse(response.text), None
        except EditParseError as error:
            self._parse_error(state, purpose, str(error))
            reask = self.builder.reask(str(error), response.truncated, required, plan)
        messages += [
            Message(role="assistant", text=response.text),
            Message(role="user", text=reask),
        ]
        again = Purpose(
            phase=f"{purpose.phase}-reask", module=purpose.module, iteration=purpose.iteration
        )
        response = self._call(state, self._request(state, again, messages))
        try:
            return parse(response.text), None
        except EditParseError as error:
            self._parse_error(state, again, str(error))
            return None, str(error)

    def _parse_error(self, state: RunState, purpose: Purpose, error: str) -> None:
        self.journal.write(
            "parse_error", step=state.step, purpose=purpose.model_dump(), error=error
        )
        self._note(f"answer unusable ({purpose.label()}): {error}")

    # --- checks ----------------------------------------------------------------------------

    def _affected(self, module_index: int, touched: set[str]) -> bool:
        """Could an edit of `touched` change the result of module `module_index`'s checks?"""
        positions = {f"{m.name}.py": i for i, m in enumerate(self.state.modules)}
        for path in touched:
            position = positions.get(path)
            # A helper file the spec does not name may be imported by anything.
            if position is None or position <= module_index:
                return True
        return False

    def _run_checks(self, state: RunState, touched: set[str]) -> list[CheckRun]:
        """The scope's checks, then every earlier check that passed and the edit could change."""
        runs = []
        if state.phase == "modules":
            self._note(f"checking module {state.scope}")
            runs.append(
                self._check(
                    state,
                    check_module(
                        self.run.root, self.run.port, state.target, state.scope, self.checks
                    ),
                )
            )
        else:
            self._note("checking the whole port")
            runs.append(
                self._check(
                    state, check_composed(self.run.root, self.run.port, state.target, self.checks)
                )
            )
        for index, module in enumerate(state.modules):
            if state.phase == "modules" and index >= state.module_index:
                break
            passed_before = any(o.passed for o in state.results.values() if o.scope == module.name)
            if passed_before and self._affected(index, touched):
                self._note(f"re-checking module {module.name} (regression guard)")
                runs.append(
                    self._check(
                        state,
                        check_module(
                            self.run.root, self.run.port, state.target, module.name, self.checks
                        ),
                    )
                )
        return runs

    def _check(self, state: RunState, run: CheckRun) -> CheckRun:
        name = "verify.json" if run.scope == COMPOSED else f"{run.scope}.json"
        write_atomically(self.run.reports / name, run.report.model_dump_json(indent=2) + "\n")
        self.journal.write(
            "check",
            step=state.step,
            scope=run.scope,
            passed=run.passed,
            outcomes=[o.model_dump() for o in run.outcomes],
            # Structured results (divergences with their L3 series) for review and report.
            levels=[level.model_dump(mode="json") for level in run.report.levels],
            seconds=round(run.report.seconds.get("total", 0.0), 3),
            cached=run.cached,
        )
        self._note(_summary(run.outcomes))
        return run

    def _save_tests(self, state: RunState, parsed: ParsedAnswer) -> None:
        """Proposed tests are kept, never overwritten, and never run as the harness's checks."""
        for relative, content in parsed.tests.items():
            name = Path(relative).name
            stem = f"{state.scope}-{state.iteration:02d}-{name}"
            target = self.run.proposed_tests / stem
            counter = 1
            while target.exists():
                counter += 1
                target = self.run.proposed_tests / f"{counter}-{stem}"
            write_atomically(target, content)
            self.journal.write(
                "proposed_test", step=state.step, path=target.name, proposed_as=relative
            )

    # --- the report ------------------------------------------------------------------------

    def _write_outcome(self) -> None:
        state = self.state
        lines = [
            f"# envport run {state.run_id}",
            "",
            f"- status: **{state.status}** ({state.reason})",
            f"- spec: {state.spec_name} -> {state.target}, model {state.model}",
            f"- steps: {state.step}, elapsed {state.elapsed_s:.1f} s",
            f"- spent: {state.usage.total} tokens in {state.calls_text()}, ${state.cost_usd:.4f}",
            "",
            "## Checks",
        ]
        lines += [f"- {o.name}: {'pass' if o.passed else 'FAIL'}" for o in state.results.values()]
        if state.open_failures and state.status != "verified":
            lines += ["", "## Open divergence", ""]
            for outcome in state.open_failures:
                lines += [f"### {outcome.name}", "", "```text", *outcome.failures[:1], "```", ""]
        lines += outcome_lines(state)
        write_atomically(self.run.reports / "outcome.md", "\n".join(lines) + "\n")
