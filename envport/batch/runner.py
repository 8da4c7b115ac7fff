"""Driving a batch: start runs as subprocesses under the concurrency limit and the cost caps,
watch them, and say how each ended.

A run is an `envport translate` (first time) or `envport resume` (after an interruption,
or a failure with --retry-failed) in its own process: the loop's own crash and kill safety
carries over unchanged, a run that crashes takes nothing else down, and CPU-heavy checks of
different runs use different cores. The children die with the batch (see child.py), so a
killed batch leaves no orphan holding a run's lock; running the command again continues.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from rich.console import Console

from envport import interrupts
from envport.batch.child import PARENT_ENV, hand_over, order_json
from envport.batch.config import BatchPlan, PlannedRun
from envport.batch.display import RunRow, make_display, summary_table
from envport.batch.money import Ledger, Money
from envport.batch.slots import BatchLock, Slot, read_manifest, write_manifest
from envport.errors import EXIT_DIVERGED, EXIT_INTERRUPTED, EXIT_OK, EXIT_TERMINATED
from envport.pipeline.command import command_words
from envport.pipeline.model_choice import public_url
from envport.review.timeline import level_summary, read_timeline
from envport.runs.options import RunOptions
from envport.runs.state import RunState
from envport.scale import cluster

if TYPE_CHECKING:
    from envport.batch.ray_runs import RayRun

POLL_S = 0.25
# How long runs get to save their state after Ctrl-C before they are killed (also safe).
STOP_GRACE_S = 30.0
# Exit codes of a run the user stopped: its own message, or the signal before Python's.
STOPPED_BY_USER = {EXIT_INTERRUPTED, EXIT_TERMINATED, -signal.SIGINT, -signal.SIGTERM}
FINISHED = {"verified", "gave up", "error", "stopped", "killed", "interrupted", "not started"}


@dataclass
class Entry:
    planned: PlannedRun
    slot: Slot
    row: RunRow
    mode: str = "fresh"  # fresh, resume, or skip
    spent: float = 0.0
    # A local process, or (--executor ray) a Ray task looked at the same way.
    process: subprocess.Popen | RayRun | None = None
    log: IO[bytes] | None = None
    log_offset: int = 0
    record: dict[str, Any] = field(default_factory=dict)

    @property
    def running(self) -> bool:
        return self.process is not None


def _where(state: RunState) -> str:
    if state.phase == "modules":
        return f"module {state.scope} #{state.iteration}"
    if state.phase == "composed":
        return f"whole port #{state.iteration}"
    return state.phase


def _fill(row: RunRow, state: RunState) -> None:
    row.steps = state.step
    row.tokens = state.usage.total
    row.usd = state.cost_usd
    row.elapsed_s = state.elapsed_s
    row.levels = level_summary(list(state.results.values()))


def _last_error(log: Path, offset: int) -> str:
    """The one-line error a failed translate/resume printed (envport's house style)."""
    try:
        with log.open("rb") as handle:
            handle.seek(offset)
            lines = handle.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return ""
    errors = [line for line in lines if line.startswith("envport: ")]
    return (errors or [line for line in lines if line.strip()] or [""])[-1].removeprefix(
        "envport: "
    )


class BatchRunner:
    def __init__(
        self,
        plan: BatchPlan,
        console: Console,
        *,
        retry_failed: bool,
        executor: str = "local",
        address: str | None = None,
    ) -> None:
        self.plan = plan
        self.executor = executor
        self.address = address
        self.ray: Any = None
        self.ledger: Money = Ledger(plan.total_usd, {})
        self.console = console
        self.retry_failed = retry_failed
        self.interrupted = False
        self.manifest: dict[str, Any] = {}
        self.entries: list[Entry] = []
        self.display = make_display(console, self._title())
        self.started = time.monotonic()

    def _title(self) -> str:
        cap = f", total cap ${self.plan.total_usd:g}" if self.plan.total_usd is not None else ""
        return (
            f"envport batch {self.plan.file.name}: {len(self.plan.runs)} runs, concurrency "
            f"{self.plan.concurrency}{cap}; runs in {self.plan.out}"
        )

    # --- the whole batch -------------------------------------------------------------------

    def run(self) -> int:
        out = self.plan.out
        out.mkdir(parents=True, exist_ok=True)
        lock = BatchLock(out)
        lock.acquire()
        try:
            self.manifest = read_manifest(out)
            self.manifest.update(format="envport-batch/1", file=str(self.plan.file))
            self.entries = [self._prepare(planned) for planned in self.plan.runs]
            self._open_ledger()
            self._save_manifest()
            self.display.start(self._rows())
            try:
                self._loop()
            except KeyboardInterrupt:
                self.interrupted = True
                self._stop_children()
            finally:
                self.display.stop()
        finally:
            for entry in self.entries:
                if entry.process is not None and entry.process.poll() is None:
                    entry.process.kill()  # only on an error of the batch itself
            lock.release()
        return self._finish()

    def _loop(self) -> None:
        while True:
            self._reap()
            self._start_more()
            self._refresh()
            self.display.update(self._rows())
            if not any(e.running or e.row.status in ("queued", "waiting") for e in self.entries):
                return
            time.sleep(POLL_S)

    def _open_ledger(self) -> None:
        """What each run spent, from its journal: the ledger starts from that, here or (on
        Ray) in an actor, so a batch started again after a kill counts what was paid."""
        spent = {entry.planned.id: entry.spent for entry in self.entries}
        if self.executor != "ray":
            self.ledger = Ledger(self.plan.total_usd, spent)
            return
        from envport.batch.ray_runs import RemoteLedger

        self.ray = cluster.connect(self.address)
        self.ledger = RemoteLedger(self.ray, self.plan.total_usd, spent)

    def _rows(self) -> list[RunRow]:
        return [entry.row for entry in self.entries]

    # --- what each run needs ---------------------------------------------------------------

    def _prepare(self, planned: PlannedRun) -> Entry:
        slot = Slot(self.plan.out, planned.id)
        slot.clear_unfinished_start()
        record = self.manifest.setdefault("runs", {}).setdefault(planned.id, {})
        entry = Entry(planned, slot, RunRow(planned.id), record=record)
        state = slot.state()
        entry.spent = slot.spent_usd()
        if state is None:
            # A run interrupted before its directory existed starts afresh; one that failed
            # to start (a model it cannot reach) waits for --retry-failed.
            if record.get("status") == "error" and not self.retry_failed:
                self._skip(entry, "error", f"{record.get('error', '')} (--retry-failed retries it)")
            return entry
        _fill(entry.row, state)
        entry.row.run_dir = str(slot.run_dir().root)  # type: ignore[union-attr]
        entry.row.usd = entry.spent
        if state.status == "verified":
            self._skip(entry, "verified", "verified in an earlier batch run")
        elif state.status == "gave_up" and not self.retry_failed:
            self._skip(entry, "gave up", f"{state.reason} (--retry-failed retries it)")
        else:
            entry.mode = "resume"
        return entry

    def _skip(self, entry: Entry, status: str, detail: str) -> None:
        entry.mode = "skip"
        entry.row.status = status
        entry.row.detail = detail

    # --- starting runs ---------------------------------------------------------------------

    def _start_more(self) -> None:
        running = [e for e in self.entries if e.running]
        for entry in self.entries:
            if entry.row.status not in ("queued", "waiting"):
                continue
            if len(running) >= self.plan.concurrency:
                return
            decision = self.ledger.ask(entry.planned.id, entry.planned.budget_usd)
            if decision.action == "start":
                self._launch(entry, decision.budget_usd)
                running.append(entry)
            elif decision.action == "wait":
                entry.row.status, entry.row.detail = "waiting", decision.reason
            else:
                entry.row.status, entry.row.detail = "not started", decision.reason
                entry.record.update(status="not started", reason=decision.reason)
                self._save_manifest()

    def _options(self, entry: Entry, budget_usd: float | None) -> RunOptions:
        run = entry.slot.run_dir()
        if entry.mode == "resume" and run is not None:
            return entry.planned.resume(run.root, budget_usd)
        return entry.planned.translate(budget_usd)

    def _launch(self, entry: Entry, budget_usd: float | None) -> None:
        options = self._options(entry, budget_usd)
        log = entry.slot.log.open("ab")
        stamp = time.strftime("%Y-%m-%d %H:%M:%S")
        # The command without its base URL: a URL may carry credentials, a log must not.
        log.write(f"\n=== {stamp} envport {shlex.join(command_words(options))}\n".encode())
        log.flush()
        entry.log_offset = log.tell()
        if self.ray is not None:
            from envport.batch.ray_runs import RayRun

            log.flush()
            entry.process = RayRun(self.ray, order_json(options).encode(), str(entry.slot.log))
        else:
            env = {**os.environ, "PYTHONUNBUFFERED": "1", PARENT_ENV: str(os.getpid())}
            process = subprocess.Popen(
                [sys.executable, "-m", "envport.batch.child"],
                stdin=subprocess.PIPE,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                # Its own session: a terminal's Ctrl-C reaches the batch alone, which passes
                # one SIGINT on to each run (two would cut a run's own clean stop short).
                start_new_session=True,
            )
            hand_over(process, options)
            entry.process = process
        entry.log = log
        entry.row.status = "running"
        entry.row.detail = "resuming" if options.command == "resume" else "starting"
        entry.row.budget_usd = budget_usd
        entry.record.update(
            status="running",
            command=options.command,
            budget_usd=budget_usd,
            base_url=public_url(entry.planned.options.base_url),
            attempts=int(entry.record.get("attempts", 0)) + 1,
        )
        entry.record.pop("error", None)
        self._save_manifest()

    # --- watching and ending runs ----------------------------------------------------------

    def _refresh(self) -> None:
        for entry in self.entries:
            if not entry.running:
                continue
            state = entry.slot.state()
            if state is None:
                continue
            _fill(entry.row, state)
            entry.row.detail = f"{_where(state)}, step {state.step}"
            entry.row.run_dir = str(entry.slot.run_dir().root)  # type: ignore[union-attr]

    def _reap(self) -> None:
        for entry in self.entries:
            process = entry.process
            if process is None or process.poll() is None:
                continue
            self._ended(entry, process.returncode)

    def _ended(self, entry: Entry, code: int) -> None:
        entry.process = None
        if entry.log is not None:
            entry.log.close()
            entry.log = None
        state = entry.slot.state()
        entry.spent = entry.slot.spent_usd()
        self.ledger.ended(entry.planned.id, entry.spent)
        row = entry.row
        error = _last_error(entry.slot.log, entry.log_offset)
        # Stopped by the user (through the batch, or by a signal sent to the run itself).
        interrupted = self.interrupted or code in STOPPED_BY_USER
        if state is not None:
            _fill(row, state)
            row.run_dir = str(entry.slot.run_dir().root)  # type: ignore[union-attr]
        if state is not None and state.status in ("verified", "gave_up"):
            row.status = "verified" if state.status == "verified" else "gave up"
            row.detail = "" if state.status == "verified" else state.reason
        elif interrupted:
            row.status = "interrupted"
            row.detail = "before it began" if state is None else f"at step {state.step}"
            if code == -signal.SIGKILL:
                row.detail += f"; killed after {STOP_GRACE_S:g} s to stop"
        elif state is None:
            row.status, row.detail = "error", error or f"exited with code {code}"
        elif code < 0 or state.status == "running":
            row.status = "killed"
            row.detail = f"ended by signal {-code}" if code < 0 else error or f"exit {code}"
        else:
            row.status = state.status  # stopped (an error the run could not get past)
            # Its own advice names `envport resume`; in a batch, the batch resumes it.
            reason = error or state.reason
            row.detail = reason.split("; continue with")[0].split("; the run is saved")[0]
        row.usd = entry.spent
        entry.record.update(status=row.status, exit=code)
        if row.status == "error":
            entry.record["error"] = row.detail
        self._save_manifest()

    def _stop_children(self) -> None:
        """Ctrl-C or SIGTERM: every run gets one SIGINT, saves its state and stops (runs are
        in sessions of their own, so a terminal's Ctrl-C reached the batch alone)."""
        children = [e for e in self.entries if e.running]
        try:
            for entry in children:
                if entry.process is not None and entry.process.poll() is None:
                    entry.process.send_signal(signal.SIGINT)
            deadline = time.monotonic() + STOP_GRACE_S
            while time.monotonic() < deadline and any(
                e.process is not None and e.process.poll() is None for e in children
            ):
                time.sleep(0.1)
        except KeyboardInterrupt:
            pass  # a second Ctrl-C: stop waiting
        for entry in children:
            if entry.process is not None and entry.process.poll() is None:
                entry.process.kill()  # as safe as any kill: the run resumes from its last step
                entry.process.wait()
            if entry.process is not None:
                self._ended(entry, entry.process.returncode)
        for entry in self.entries:
            if entry.row.status in ("queued", "waiting"):
                entry.row.detail = "not started: the batch was interrupted"

    def _save_manifest(self) -> None:
        write_manifest(self.plan.out, self.manifest)

    # --- the summary -----------------------------------------------------------------------

    def _finish(self) -> int:
        for entry in self.entries:
            run = entry.slot.run_dir()
            if run is not None:
                entry.row.iterations = len(read_timeline(run.transcript).iterations)
        rows = self._rows()
        verified = sum(row.verified for row in rows)
        title = f"envport batch {self.plan.file.name}: {verified} of {len(rows)} verified"
        self.console.print(summary_table(rows, title))
        spent = sum(row.usd for row in rows)
        cap = f" of the total cap ${self.plan.total_usd:g}" if self.plan.total_usd else ""
        wall = time.monotonic() - self.started
        self._say(f"spent ${spent:.4f}{cap}; this batch run took {wall:.1f} s")
        capped = [row for row in rows if row.status == "not started"]
        if capped:
            why = capped[0].detail.removeprefix("not started: ")
            self._say(f"{len(capped)} run(s) not started: {why}")
        failed = [row for row in rows if row.status in ("gave up", "error")]
        if failed:
            self._say(f"{len(failed)} run(s) failed; `--retry-failed` retries them")
        for row in rows:
            if row.run_dir and not row.verified:
                self._say(f"  {row.id}: envport review {row.run_dir}")
        if self.interrupted or any(row.status in ("killed", "interrupted") for row in rows):
            self._say(f"to continue: envport batch {self.plan.file}")
        interrupts.decided()
        if self.interrupted:
            return interrupts.exit_code(interrupts.received())
        return EXIT_OK if verified == len(rows) else EXIT_DIVERGED

    def _say(self, text: str) -> None:
        self.console.print(f"envport: {text}", markup=False, highlight=False)
