"""The closed loop: plan, generate each module, check, repair, then check the whole port.

Only this module knows the order of phases. One call of `Driver.step` is one step: the
phase for the run's state does the step's work (`pipeline/phases.py`,
`pipeline/optimize_phase.py`), `decide` says what follows (`pipeline/decision/decide.py`, pure),
and the driver carries the decision out through the recorder (`pipeline/recorder.py`):
commit, journal, save the run state. A step works on a copy of the state and replaces it
only when it completes, so an interrupt or a kill always leaves `run.json` at a step
boundary, matched by the git commit in `state.head`; running the step again renders the
same prompts and the response cache answers them without a new paid call.
"""

from __future__ import annotations

import signal
import time
from dataclasses import replace

from envport import interrupts
from envport.llm import Model
from envport.llm.budget import BudgetExhausted, WallTimeExhausted
from envport.llm.failures import printable
from envport.pipeline import optimize_phase, phases
from envport.pipeline.asking import Asker
from envport.pipeline.decision.decide import decide
from envport.pipeline.decision.values import (
    BudgetEnded,
    Commit,
    Complete,
    Decision,
    Finish,
    GiveUp,
    Note,
    Record,
    RecordAttempt,
    Revert,
    WriteBenchReport,
)
from envport.pipeline.optimize import BenchCache
from envport.pipeline.phases import StepContext, StepResult
from envport.pipeline.progress import Progress
from envport.pipeline.prompting import PromptBuilder
from envport.pipeline.recorder import Recorder
from envport.pipeline.schedule import Checker
from envport.pipeline.session import Session
from envport.runs.layout import RunDir
from envport.runs.state import RunState, Status
from envport.spec import PortSpec

#: How a run that ran out of wall time says so (translate's resume line looks for it).
WALL_TIME = "wall-time budget"


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
        self.progress = progress
        self.recorder = Recorder(run)
        self.session = Session(run.root)
        self.session_started = time.monotonic()
        self.base_elapsed = state.elapsed_s
        self.asker = Asker(
            run,
            state.limits,
            model,
            builder,
            self.recorder,
            self.session,
            self._note,
            self._time_left,
        )
        self.spending = self.asker.spending
        self.checker = Checker(run, self.recorder, self._note)
        self._context = StepContext(
            state=state,
            run=run,
            spec=spec,
            builder=builder,
            recorder=self.recorder,
            asker=self.asker,
            checker=self.checker,
            benches=BenchCache(run.cache / "bench"),
            note=self._note,
        )

    # --- session ---------------------------------------------------------------------------

    def run_until_done(self) -> RunState:
        """Take steps until the run is verified or gives up; interrupts propagate."""
        self.session.acquire()
        try:
            self._begin()
        except BaseException:
            self.session.close()
            raise
        self.session.open_loop()
        try:
            while not self.state.finished:
                interrupts.check()
                if self._out_of_time():
                    break
                try:
                    self.step()
                except BudgetExhausted as error:
                    self._carry_out(decide(self.state, BudgetEnded(str(error))))
                except WallTimeExhausted as error:
                    # Given up at the last completed step: the cancelled call was never
                    # answered, so a resume asks it again and pays for nothing twice.
                    reason = f"{self._wall_time_used()}; {error}"
                    self._carry_out(decide(self.state, BudgetEnded(reason)))
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
            self.progress.stop()
            self.session.close()
        return self.state

    def _begin(self) -> None:
        state = self.state
        # Whatever a killed step left half-written goes; the step runs again from its start.
        self.recorder.history.reset(state.head)
        self.run.port.mkdir(exist_ok=True)  # git keeps no empty directories
        event = "run_started" if state.sessions == 0 else "resumed"
        state.sessions += 1
        state.status = "running"
        state.reason = ""
        self.recorder.started(event, state)
        self._save(state)
        self.progress.start(state)
        self._note(f"{event.replace('_', ' ')} at step {state.step} with {state.model}")

    def _out_of_time(self) -> bool:
        limit = self.state.limits.max_minutes
        if limit is not None and self._elapsed() > limit * 60:
            self._carry_out(decide(self.state, BudgetEnded(self._wall_time_used())))
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
        spending = self.spending
        state.elapsed_s = round(self._elapsed(), 3)
        state.usage = spending.usage
        state.cost_usd = round(spending.cost_usd, 6)
        state.paid_calls = spending.paid_calls
        state.cached_calls = spending.cached_calls
        self.run.save(state)

    def _halt(self, status: Status, reason: str) -> None:
        # The last completed step's state, so a resume repeats the interrupted step.
        self.state.status = status
        self.state.reason = reason
        self._save(self.state)
        self.recorder.halted(self.state)

    def _note(self, text: str) -> None:
        self.progress.event(self.state, text)

    # --- one step --------------------------------------------------------------------------

    def step(self) -> None:
        state = self.state
        self.checker.cache.step = state.step
        ctx = self._context_for(state)
        result: StepResult | None = None
        if state.phase == "plan":
            result = phases.plan(ctx)
        elif state.phase == "composed" and not state.composed_checked:
            result = phases.first_composed_check(ctx)
        elif state.phase in ("modules", "composed"):
            result = phases.model_step(ctx)
        elif state.phase == "optimize":
            result = optimize_phase.optimize(ctx)
        if result is not None:
            self._carry_out(result)

    def _context_for(self, state: RunState) -> StepContext:
        return replace(self._context, state=state)

    # --- carrying a decision out -----------------------------------------------------------

    def _carry_out(self, decision: Decision) -> None:
        """Do what the decision says, in its order; `self.state` is the last completed step's."""
        for act in decision.acts:
            if isinstance(act, Commit):
                self.recorder.commit(self.state.step, act.message)
            elif isinstance(act, Revert):
                self.recorder.revert(self.state.step, act.message)
            elif isinstance(act, Record):
                self.recorder.decision(self.state.step, act.fields)
            elif isinstance(act, Note):
                self._note(act.text)
            elif isinstance(act, RecordAttempt):
                self.recorder.optimize_attempt(self.state, act.attempt, act.comparison, act.cached)
            elif isinstance(act, WriteBenchReport):
                self.recorder.bench_report(decision.state)
            elif isinstance(act, Complete):
                self._complete(decision.state)
            elif isinstance(act, Finish):
                self.recorder.finished(self.state, self.session.lag_summary())
                self._note(f"verified: {self.state.reason}")
            elif isinstance(act, GiveUp):
                self._give_up(act.reason)
            else:
                raise TypeError(f"no way to carry out {act!r}")

    def _complete(self, nxt: RunState) -> None:
        """A step is done: it counts, and the state that describes it becomes the run's."""
        nxt.step = self.state.step + 1
        nxt.head = self.recorder.history.head
        self._save(nxt)
        self.state = nxt

    def _give_up(self, reason: str) -> None:
        self.state.status = "gave_up"
        self.state.reason = reason
        self._save(self.state)
        self.recorder.finished(self.state, self.session.lag_summary())
        self._note(f"gave up: {reason}")
