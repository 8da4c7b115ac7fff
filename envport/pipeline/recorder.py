"""The run's record: every transcript event and every git commit the driver makes.

The driver and its phases ask the recorder to record; nothing else in the pipeline writes
to `transcript.jsonl` or commits, so the transcript's shape is decided in one place (the
model layer journals its own calls, `envport.llm.accounted`). Reports a step leaves on
disk (a check's JSON, the outcome summary, the optimisation's bench file) are written here
too: they are the run's record for a person, as the transcript is for the tools.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from envport.io import write_atomically
from envport.io.inert import code_block, inert, markdown_line
from envport.llm import ModelRequest
from envport.llm.types import ModelResponse
from envport.pipeline.checks import CheckRun
from envport.pipeline.optimize import Comparison, outcome_lines, write_bench_report
from envport.repair.apply import AppliedEdit
from envport.repair.edits import ParsedAnswer
from envport.runs.history import History
from envport.runs.journal import Journal
from envport.runs.layout import RunDir
from envport.runs.state import COMPOSED, OptimizeAttempt, RunState
from envport.serve.lag import LagSummary


class Recorder:
    def __init__(self, run: RunDir) -> None:
        self.run = run
        self.journal = Journal(run.transcript)
        self.history = History(run.root)
        # The stable prefix is journaled once per session, prompts refer to it by hash.
        self._journaled_prefixes: set[str] = set()

    # --- the session ---------------------------------------------------------------------

    def started(self, event: str, state: RunState) -> None:
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

    def halted(self, state: RunState) -> None:
        self.journal.write(state.status, step=state.step, reason=state.reason)

    def finished(self, state: RunState, lag: LagSummary | None) -> None:
        """The run's end: the session's event-loop lag (if measured), then how it ended."""
        if lag is not None:
            self.journal.write("event_loop_lag", **lag.model_dump())
        if state.status == "verified":
            self.journal.write("finished", step=state.step, status="verified")
        else:
            self.journal.write(
                "finished", step=state.step, status=state.status, reason=state.reason
            )
        self._write_outcome(state)

    # --- git -----------------------------------------------------------------------------

    def commit(self, step: int, message: str) -> str:
        sha = self.history.commit(message)
        self.journal.write("commit", step=step, sha=sha, message=message)
        return sha

    def revert(self, step: int, message: str) -> str:
        """Undo the last commit with a commit of its own: both stay in the history."""
        sha = self.history.revert_head(message)
        self.journal.write("commit", step=step, sha=sha, message=message)
        return sha

    # --- decisions and their evidence ----------------------------------------------------

    def decision(self, step: int, fields: dict[str, Any]) -> None:
        self.journal.write("decision", step=step, **fields)

    def edits(self, step: int, applied: list[AppliedEdit]) -> None:
        for edit in applied:
            self.journal.write(
                "edit", step=step, path=edit.path, created=edit.created, diff=edit.diff
            )

    def proposed_tests(self, state: RunState, parsed: ParsedAnswer) -> None:
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

    def check(self, step: int, run: CheckRun) -> None:
        name = "verify.json" if run.scope == COMPOSED else f"{run.scope}.json"
        write_atomically(self.run.reports / name, run.report.model_dump_json(indent=2) + "\n")
        self.journal.write(
            "check",
            step=step,
            scope=run.scope,
            passed=run.passed,
            outcomes=[o.model_dump() for o in run.outcomes],
            # Structured results (divergences with their L3 series) for review and report.
            levels=[level.model_dump(mode="json") for level in run.report.results],
            # The reference's branch coverage of this check (the HTML report's source view).
            coverage=run.report.coverage.model_dump(mode="json") if run.report.coverage else None,
            seconds=round(run.report.seconds.get("total", 0.0), 3),
            cached=run.cached,
        )

    # --- model calls ---------------------------------------------------------------------

    def prompt(self, step: int, request: ModelRequest, prefix_sha: str) -> None:
        if prefix_sha not in self._journaled_prefixes:
            self._journaled_prefixes.add(prefix_sha)
            self.journal.write("context", step=step, sha256=prefix_sha, text=request.stable_prefix)
        self.journal.write(
            "prompt",
            step=step,
            purpose=request.purpose.model_dump(),
            system=request.system,
            stable_prefix_sha256=prefix_sha,
            messages=[m.model_dump() for m in request.messages],
            max_tokens=request.max_tokens,
        )

    def answer(self, step: int, request: ModelRequest, response: ModelResponse) -> None:
        self.journal.write(
            "answer",
            step=step,
            purpose=request.purpose.model_dump(),
            text=response.text,
            stop_reason=response.stop_reason,
            cached=response.cached,
            model=response.model,
        )

    def parse_error(self, step: int, purpose: dict[str, Any], error: str) -> None:
        self.journal.write("parse_error", step=step, purpose=purpose, error=error)

    # --- optimisation --------------------------------------------------------------------

    def optimize_bench(self, step: int, comparison: Comparison, cached: bool) -> None:
        speed = comparison.speeds[0] if comparison.speeds else None
        self.journal.write(
            "optimize_bench",
            step=step,
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

    def optimize_attempt(
        self,
        state: RunState,
        attempt: OptimizeAttempt,
        comparison: Comparison | None,
        cached: bool,
    ) -> None:
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

    def bench_report(self, state: RunState) -> None:
        write_bench_report(self.run.reports, state, state.spec_source)

    # --- the report ----------------------------------------------------------------------

    def _write_outcome(self, state: RunState) -> None:
        # Reasons, divergences and names quote the port, the model and the spec: each is one
        # escaped line or a code block no line of it can close, so it cannot add a heading,
        # a link or HTML of its own; and shown, never obeyed (`inert`).
        line = markdown_line
        lines = [
            f"# envport run {line(state.run_id)}",
            "",
            f"- status: **{state.status}** ({line(state.reason)})",
            f"- spec: {line(state.spec_name)} -> {line(state.target)}, model {line(state.model)}",
            f"- steps: {state.step}, elapsed {state.elapsed_s:.1f} s",
            f"- spent: {state.usage.total} tokens in {state.calls_text()}, ${state.cost_usd:.4f}",
            "",
            "## Checks",
        ]
        lines += [
            f"- {line(o.name)}: {'pass' if o.passed else 'FAIL'}" for o in state.results.values()
        ]
        if state.open_failures and state.status != "verified":
            lines += ["", "## Open divergence", ""]
            for outcome in state.open_failures:
                failure = "\n".join(outcome.failures[:1])
                lines += [f"### {line(outcome.name)}", "", code_block(failure, "text"), ""]
        lines += outcome_lines(state)
        write_atomically(self.run.reports / "outcome.md", inert("\n".join(lines)) + "\n")
