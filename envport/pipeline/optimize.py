"""The optimisation phase's measurements: SPS of two versions of a port, side by side.

`translate --optimize` keeps an optimisation only when every level still passes and the
port's steps per second at the largest batch size improve by at least `min_gain` (5%).
Both versions run in worker processes (generated code never enters the driver), with the
same workload as `envport bench` (the worker's `bench` op).

Noise: the machine is shared (2 cores, other jobs), so a single timing of each version
would often decide on the weather. The current port and the candidate are measured in the
same session, at each batch size taking turns one timed run at a time (the order flips
every repeat, so neither always runs right after the other), and each keeps its best of
`repeats` runs: load from elsewhere slows runs, it never speeds one up, so the best run is
the closest to what the code can do. Every run is journaled, so the spread is visible.

A step run again after a kill must decide the same way it did (and render the same next
prompt), so a comparison is cached by the step and both versions' files, like the checks.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from envport import interrupts
from envport.errors import EnvportError
from envport.io import JsonCache, write_atomically
from envport.io.inert import markdown_line
from envport.io.scratch import remove_tree
from envport.io.tree import copy_tree, files_under, named
from envport.runs.state import OptimizeAttempt, OptimizeSettings, RunState
from envport.spec import PortSpec

if TYPE_CHECKING:
    from envport.serve.ops import LoadPort

log = logging.getLogger("envport.pipeline")

# Seconds one bench request (prepare + one timed run) may take before the worker is stopped:
# a candidate that slow is reverted, with this as the reason.
BENCH_TIMEOUT_S = 300.0
BENCH_REPORT = "bench-optimize.json"


class PortSpeed(BaseModel):
    """One version's SPS at each batch size: the best run, every run, the loop that won."""

    sps: dict[int, float] = Field(default_factory=dict)
    runs: dict[int, list[float]] = Field(default_factory=dict)
    loop: dict[int, str] = Field(default_factory=dict)


class Comparison(BaseModel):
    """Versions of a port benched in one session (the current port first)."""

    batch_sizes: list[int]
    steps: int
    repeats: int
    speeds: list[PortSpeed] = Field(default_factory=list)
    error: str | None = None  # a version could not be benched ...
    failed: int | None = None  # ... and which one (index into the versions)
    seconds: float = 0.0


class BenchFailed(EnvportError):
    def __init__(self, index: int, message: str) -> None:
        super().__init__(message, exit_code=1)
        self.index = index


def _subject(spec: PortSpec, port: Path, target: str) -> LoadPort:
    from envport.targets.registry import load_request

    return load_request(spec, port, target)


def measure(
    spec: PortSpec, target: str, ports: list[Path], settings: OptimizeSettings
) -> Comparison:
    """SPS of each port at each batch size, interleaved; a failure names its port."""
    started = time.monotonic()
    sizes = sorted(settings.batch_sizes)
    result = Comparison(batch_sizes=sizes, steps=settings.steps, repeats=settings.repeats)
    try:
        result.speeds = _interleaved(spec, target, ports, sizes, settings)
    except BenchFailed as error:
        result.error, result.failed = str(error), error.index
    result.seconds = round(time.monotonic() - started, 3)
    return result


def _interleaved(
    spec: PortSpec,
    target: str,
    ports: list[Path],
    sizes: list[int],
    settings: OptimizeSettings,
) -> list[PortSpeed]:
    from contextlib import ExitStack

    from envport.serve.client import PortWorker
    from envport.targets.bench.run import (
        START_STATES,
        action_pool,
        needs_start_states,
        start_states,
        take_turns,
    )
    from envport.targets.reference import Reference

    reference = Reference(spec)
    loads = [_subject(spec, port, target) for port in ports]
    states = None
    if needs_start_states(loads):  # a Rust port's ABI has no reset
        states = start_states(reference, min(START_STATES, max(sizes)))
    speeds = [PortSpeed() for _ in ports]
    with ExitStack() as stack:
        workers = []
        for index, load in enumerate(loads):
            worker = stack.enter_context(PortWorker(timeout=BENCH_TIMEOUT_S, load=load))
            _guarded(index, worker.receive)  # the load answer: a broken port stops here
            workers.append(worker)
        for batch in sizes:
            actions = action_pool(reference.action_space, batch, seed=0)
            answers = take_turns(
                len(ports),
                settings.repeats,
                functools.partial(_turn, workers, batch, actions, states, settings.steps),
            )
            for speed, mine in zip(speeds, answers, strict=True):
                for answer in mine:
                    sps = round(float(answer["sps"]), 1)
                    speed.runs.setdefault(batch, []).append(sps)
                    if sps >= speed.sps.get(batch, 0.0):
                        speed.sps[batch] = sps
                        speed.loop[batch] = str(answer["loop"])
    return speeds


def _turn(
    workers: list[Any], batch: int, actions: Any, states: Any, steps: int, index: int
) -> dict[str, Any]:
    return _guarded(index, _bench, workers[index], batch, actions, states, steps)


def _bench(worker: Any, batch: int, actions: Any, states: Any, steps: int) -> dict[str, Any]:
    """One timed run (the worker prepares and warms a new workload first, untimed)."""
    from envport.serve.ops import Bench

    return worker.request(
        Bench(batch=batch, steps=steps, repeats=1, actions=actions, states=states, seed=0)
    )


def _guarded(index: int, call: Any, *args: Any) -> Any:
    try:
        return call(*args)
    except EnvportError as error:
        raise BenchFailed(index, str(error).splitlines()[0] if str(error) else "failed") from None


class BenchCache(JsonCache[Comparison]):
    """Comparisons of a step by what determines them: the step, both ports' files, settings."""

    def __init__(self, directory: Path) -> None:
        super().__init__(directory, Comparison, "bench cache")

    def key(self, step: int, ports: list[Path], settings: OptimizeSettings) -> str:
        material = {
            "step": step,
            "ports": [_digest(port) for port in ports],
            "settings": settings.model_dump(mode="json"),
        }
        text = json.dumps(material, sort_keys=True)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def measure(
        self,
        step: int,
        spec: PortSpec,
        target: str,
        ports: list[Path],
        settings: OptimizeSettings,
    ) -> tuple[Comparison, bool]:
        key = self.key(step, ports, settings)
        cached = self.get(key)
        if cached is not None:
            return cached, True
        comparison = measure(spec, target, ports, settings)
        interrupts.check()  # timings an interrupt cut short are not a measurement
        self.put(key, comparison)
        return comparison, False


def _not_digested(parts: tuple[str, ...]) -> bool:
    return parts[-1] == "__pycache__" or parts == ("target",)


def _digest(port: Path) -> dict[str, str]:
    """Every file of a port by relative path and content hash (any language: a Rust crate's
    Cargo.toml matters as much as its sources); build output and bytecode aside."""
    found = {}
    for path in files_under(port, _not_digested):
        found[path.relative_to(port).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def snapshot(port: Path, destination: Path) -> Path:
    """A copy of the port as it is now, to bench beside the edited one."""
    if destination.exists():
        remove_tree(destination)
    copy_tree(port, destination, named("__pycache__", "target"))
    return destination


def human(sps: float) -> str:
    from envport.targets.bench.report import human as short

    return short(sps)


def ratio_text(attempt: OptimizeAttempt) -> str:
    """`SPS at B=8192: 34.2k -> 5.28M (154x)`, or why there is no figure."""
    before = attempt.sps_before.get(attempt.batch)
    after = attempt.sps_after.get(attempt.batch)
    if before is None or after is None or attempt.ratio is None:
        return f"SPS at B={attempt.batch}: not measured"
    return f"SPS at B={attempt.batch}: {human(before)} -> {human(after)} ({attempt.ratio:.2f}x)"


def kept_gain(state: RunState) -> float | None:
    """How much faster the kept rounds made the port at the largest batch, None if none was
    kept: the product of each kept round's ratio, measured against the port it replaced in
    the same session. Numbers from different sessions differ by the machine's load alone."""
    ratios = [a.ratio for a in state.optimization.attempts if a.kept and a.ratio is not None]
    if not ratios:
        return None
    gain = 1.0
    for ratio in ratios:
        gain *= ratio
    return gain


def outcome_lines(state: RunState) -> list[str]:
    """The optimisation section of reports/outcome.md: every attempt and its SPS."""
    progress = state.optimization
    settings = state.optimize
    if not settings.rounds:
        return []
    largest = settings.largest
    lines = [
        "",
        "## Optimisation",
        "",
        f"{progress.rounds_done} of {settings.rounds} rounds; kept when every level passes "
        f"and SPS at B={largest} is at least {1 + settings.min_gain:.2f}x the current port's "
        f"(both measured in one session, interleaved, best of {settings.repeats} runs of "
        f"{settings.steps} steps).",
        "",
    ]
    gain = kept_gain(state)
    if gain is not None:
        lines += [
            f"The kept rounds made the port {gain:.2f}x as fast at B={largest} (their in-session "
            "ratios multiplied; SPS from different sessions are not compared).",
            "",
        ]
    sizes = sorted(settings.batch_sizes)
    header = " | ".join(f"B={b} before -> after" for b in sizes)
    lines += [
        f"| round | decision | {header} | ratio | why |",
        "|---|---|" + "---|" * len(sizes) + "---|---|",
    ]
    for attempt in progress.attempts:
        cells = []
        for batch in sizes:
            before = attempt.sps_before.get(batch)
            after = attempt.sps_after.get(batch)
            cells.append(f"{human(before) if before else '-'} -> {human(after) if after else '-'}")
        ratio = f"{attempt.ratio:.2f}x" if attempt.ratio is not None else "-"
        decision = "kept" if attempt.kept else "reverted"
        # The bench's or the checks' words: one cell, its pipes and markup escaped.
        why = markdown_line((attempt.why.splitlines() or [""])[0])
        lines.append(f"| {attempt.round} | {decision} | {' | '.join(cells)} | {ratio} | {why} |")
    return lines


def write_bench_report(reports: Path, state: RunState, spec_source: str) -> None:
    """reports/bench-optimize.json in `envport bench`'s format, one row per version benched,
    so a report that shows bench results shows the optimisation's too."""
    from envport.targets.bench.report import BenchReport, BenchRow, machine

    settings = state.optimize
    progress = state.optimization
    report = BenchReport(
        spec=spec_source,
        created=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        machine=machine(),
        steps=settings.steps,
        repeats=settings.repeats,
        batch_sizes=sorted(settings.batch_sizes),
    )

    def rows(name: str, sps: dict[int, float]) -> None:
        for batch, value in sorted(sps.items()):
            report.rows.append(
                BenchRow(
                    name=name,
                    kind="port",
                    backend=state.target,
                    batch=batch,
                    sps=value,
                    steps=settings.steps,
                )
            )

    rows(f"{state.target} port before optimisation", progress.start_sps)
    # Each round's pair, as measured side by side: the figures a decision was made on.
    for attempt in progress.attempts:
        if attempt.sps_after:
            verdict = "kept" if attempt.kept else "reverted"
            rows(f"round {attempt.round}: current port", attempt.sps_before)
            rows(f"round {attempt.round}: edit ({verdict})", attempt.sps_after)
    write_atomically(reports / BENCH_REPORT, report.model_dump_json(indent=2) + "\n")
