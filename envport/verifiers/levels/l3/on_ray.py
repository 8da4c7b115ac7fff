"""L3 over a Ray cluster (`envport verify --executor ray`): each chunk of episodes is one Ray
task that plays the reference, has the port answer through a sandboxed port worker started
on that Ray worker, and judges, with the same code the local lanes run (`PortFeed`).

The chunks are the ones local lanes would cut for the same lane count (`chunks.Chunks`),
each is judged on its own, and the parts are merged by `l3.merge` (the first divergences
by episode): the report is the one local lanes produce. The port never runs in the driver
or in a Ray worker's own process: only in the port worker, with the sandbox and the
environment without credentials of every local worker (docs/design.md, contract 7).

A Ray worker process keeps its reference and its port worker between chunks (a port loads
once per process, and a JAX port compiles once: every chunk is padded to one shape). A port
that fails or hangs is the task's answer, a `PortError` with the port's own words after at
most the per-request timeout; a task that answers nothing at all (a node stuck, no CPU to
run on) is stopped after a bound of its own. Ray re-runs the tasks a dead node held.
"""

from __future__ import annotations

import atexit
import json
from dataclasses import dataclass
from typing import Any

from envport.errors import PortError
from envport.scale import cluster
from envport.serve.client import PortWorker
from envport.serve.ops import LoadPort
from envport.spec import PortSpec, load_spec
from envport.targets.reference import Reference
from envport.verifiers.coverage.bounds import Coverage
from envport.verifiers.levels.l3 import lanes as l3_lanes
from envport.verifiers.levels.l3 import rollout as l3
from envport.verifiers.levels.l3.chunks import Chunks, chunk_size
from envport.verifiers.options import L3Options
from envport.verifiers.reporting.divergence import LevelResult
from envport.verifiers.reporting.replay import Replay

# CPUs a chunk task asks for. A task keeps its reference and its port worker busy in turn
# (one process at a time), so one per CPU fills the cores. Not half a CPU: Ray keeps only
# as many idle worker processes as the node has CPUs, so the extra ones would be ended
# between runs and start cold (a new process, the port loaded again) every time.
TASK_CPUS = 1.0
# Tries for a chunk whose worker or node died (not for a port's failure: that is an answer).
CHUNK_RETRIES = 3
# Beyond the port's own timeouts (loading, free-running, resync), what one chunk may take
# before the driver stops waiting for any task: the reference's play of a chunk and Ray's
# scheduling.
CHUNK_SLACK_S = 300.0


@dataclass(frozen=True)
class ChunkJob:
    """Everything a Ray worker needs to check one chunk; paths absolute, on a filesystem
    every node reaches (the spec and the port are read where the task runs)."""

    spec_file: str
    load: LoadPort
    options: L3Options
    replay: Replay
    size: int
    timeout: float
    # Count the played states against `[state.bounds]` (the coverage local lanes count).
    coverage: bool = False


# A Ray worker process's reference and port worker, kept between its chunks.
_REFERENCES: dict[str, tuple[PortSpec, Reference]] = {}
_PORTS: dict[str, PortWorker] = {}


def _port(job: ChunkJob) -> PortWorker:
    key = json.dumps([job.load.args(), job.timeout], sort_keys=True)
    worker = _PORTS.get(key)
    if worker is None:
        for stale in _PORTS.values():  # another port's worker: one at a time per process
            stale.close()
        _PORTS.clear()
        worker = PortWorker(timeout=job.timeout, load=job.load)
        try:
            worker.receive()  # the load answer; a port that cannot load fails here
        except BaseException:
            worker.close()
            raise
        _PORTS[key] = worker
    return worker


def _reference(spec_file: str) -> tuple[PortSpec, Reference]:
    if spec_file not in _REFERENCES:
        spec = load_spec(spec_file)
        _REFERENCES.clear()
        _REFERENCES[spec_file] = (spec, Reference(spec))
    return _REFERENCES[spec_file]


@atexit.register
def _close_ports() -> None:
    for worker in _PORTS.values():
        worker.close()


def check_chunk(job: ChunkJob, indices: list[int]) -> dict[str, Any]:
    """One chunk on this (Ray worker) process: `{"results": {mode: [LevelResult]}}`, or
    `{"error": the port's failure}`."""
    try:
        spec, reference = _reference(job.spec_file)
        spec = spec.for_target(job.load.target)  # the target's tolerances, as the driver's
        worker = _port(job)
        coverage = Coverage.of(spec) if job.coverage else None
        feed = l3_lanes.PortFeed(worker, spec, job.options, job.size, job.replay, coverage)
        played = l3.play_reference(reference, spec, job.options, indices)
        feed.add(played)
        try:
            feed.finish()
        except PortError:
            # The worker may be mid-request or stopped: the next chunk starts a fresh one.
            _PORTS.pop(next(k for k, w in _PORTS.items() if w is worker), None)
            worker.close()
            raise
        return {"results": feed.results, "coverage": coverage}
    except PortError as error:
        return {"error": str(error)}


def plan_chunks(options: L3Options, lanes: int) -> tuple[int, list[list[int]]]:
    """The chunk size and the chunks, in order: those local lanes cut for `lanes` lanes."""
    indices = l3.episode_indices(options)
    size = len(indices) if options.batch else chunk_size(len(indices), lanes)
    chunks = Chunks(indices, size, lanes)
    planned = []
    while (chunk := chunks.take()) is not None:
        planned.append(chunk)
    return size, planned


def run_l3(
    spec: PortSpec,
    spec_file: str,
    load: LoadPort,
    options: L3Options,
    replay: Replay,
    timeout: float,
    address: str | None = None,
    lanes: int | None = None,
    coverage: Coverage | None = None,
) -> list[LevelResult]:
    """L3 as Ray tasks, one per chunk; `lanes` sizes the chunks as that many local lanes
    would (None: one per CPU of the cluster). Each chunk's reference states are counted
    into `coverage`, if given, as local lanes count them."""
    ray = cluster.connect(address)
    lanes = lanes or cluster.cluster_cpus(ray)
    size, chunks = plan_chunks(options, lanes)
    job = ray.put(ChunkJob(spec_file, load, options, replay, size, timeout, coverage is not None))
    task = ray.remote(check_chunk).options(num_cpus=TASK_CPUS, max_retries=CHUNK_RETRIES)
    pending = [task.remote(job, chunk) for chunk in chunks]
    # Loading, free-running and resync each answer within `timeout`, or the port worker
    # is stopped and the task answers with the port's error.
    patience = 3 * timeout + CHUNK_SLACK_S
    answers: dict[Any, dict[str, Any]] = {}
    order = list(pending)
    try:
        while pending:
            done, pending = ray.wait(pending, num_returns=1, timeout=patience)
            if not done:
                raise PortError(
                    f"L3 on Ray: no chunk finished within {patience:g} s ({len(pending)} of "
                    f"{len(order)} still running or waiting for a CPU); is the cluster alive "
                    "and does every node reach the spec and the port?"
                )
            answer = _answer(ray, done[0])
            if "error" in answer:
                raise PortError(answer["error"])
            answers[done[0]] = answer
            if coverage is not None and answer.get("coverage") is not None:
                coverage.absorb(answer["coverage"])
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)
    modes = ["free", "resync"] if options.mode == "both" else [options.mode]
    parts: dict[str, list[LevelResult]] = {mode: [] for mode in modes}
    for ref in order:  # chunk order: the merge sorts divergences by episode anyway
        for mode, found in answers[ref]["results"].items():
            parts[mode] += found
    return [l3.merge(found) for found in parts.values() if found]


def _answer(ray: Any, ref: Any) -> dict[str, Any]:
    """A finished task's answer; a task Ray could not finish (its node died more often
    than it may be retried, or it raised) as the one line that says why."""
    try:
        return dict(ray.get(ref))
    except ray.exceptions.RayTaskError as error:
        cause = error.cause if error.cause is not None else error
        return {"error": f"L3 on Ray: a chunk failed: {type(cause).__name__}: {cause}"}
    except ray.exceptions.RayError as error:
        lines = str(error).strip().splitlines() or [type(error).__name__]
        return {"error": f"L3 on Ray: a chunk was lost: {lines[0]}"}
