"""L3 over lanes: the reference's play, the port's answers and the judging, overlapped.

A lane is one reference player and one port worker. The run's episodes go in chunks, each
taken by whichever lane is free. While a lane's reference plays chunk k+1, its port worker
runs chunk k free-running and then resynced, and the verifier judges what came back, so one
lane already keeps two processes busy. `--workers N` runs N lanes: the first plays the
reference in the verifier's own process (which would otherwise sit waiting) with the
verifier's port worker; each other lane has a reference worker and a port worker of its
own, started with the run so that they load while L1 and L2 run.

The port sees a chunk's reference states (the resync request) only after it has answered
the chunk's free-running request: a port that reads its requests learns nothing from them
that it could replay.
"""

from __future__ import annotations

import functools
import sys
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

import zmq

from envport.io import profile
from envport.serve.client import PortWorker
from envport.serve.ops import LoadReference, Op, PlayReference
from envport.spec import PortSpec
from envport.targets.reference import Reference
from envport.verifiers.coverage.bounds import Coverage
from envport.verifiers.coverage.branches import Measure
from envport.verifiers.levels.l3 import rollout as l3
from envport.verifiers.levels.l3.chunks import Chunks, chunk_size
from envport.verifiers.levels.l3.left import joined
from envport.verifiers.levels.l3.played import Played
from envport.verifiers.options import L3Options
from envport.verifiers.reporting.after import outputs_only
from envport.verifiers.reporting.compare import Steps, contract_problems
from envport.verifiers.reporting.divergence import LevelResult
from envport.verifiers.reporting.replay import Replay

# Answers are judged in batches of at least this many rows: judging costs mostly per call,
# and a small run is judged once, at its end.
JUDGE_ROWS = 20_000
# How long a lane waits on its sockets before looking again (a dead worker is noticed by
# the worker's own receive, which polls its process).
POLL_MS = 50


class Worker(Protocol):
    """A port or reference worker, local (PortWorker) or remote (EnvClient)."""

    @property
    def socket(self) -> Any: ...

    def send(self, op: Op) -> None: ...
    def receive(self, timeout: float | None = None) -> Any: ...
    def ready(self) -> bool: ...


class PortFeed:
    """One port worker's L3 requests: one outstanding at a time, each answer judged as it
    arrives."""

    def __init__(
        self,
        worker: Worker,
        spec: PortSpec,
        options: L3Options,
        chunk: int,
        replay: Replay,
        coverage: Coverage | None = None,
    ) -> None:
        self.worker = worker
        self.coverage = coverage
        self.spec = spec
        self.options = options
        self.replay = replay
        self.modes = ["free", "resync"] if options.mode == "both" else [options.mode]
        self.results: dict[str, list[LevelResult]] = {mode: [] for mode in self.modes}
        horizon = spec.levels.l3.free_horizon
        steps = min(options.steps, horizon) if horizon else options.steps
        # Shapes a compiling backend (JAX) pads to, so it compiles once per run, not once
        # per chunk; the others ignore them.
        self._free_pad = [chunk, steps]
        self._queue: deque[tuple[Op, Callable[[Any], None]]] = deque()
        self._waiting: Callable[[Any], None] | None = None
        self._unjudged: dict[str, list[tuple[Played, Steps, Any]]] = {m: [] for m in self.modes}
        self._port_seconds: dict[str, dict[str, float]] = {
            mode: {"port_compile": 0.0, "port_run": 0.0} for mode in self.modes
        }
        # Each episode's batch, (first, last): what a replay must play to show a divergence
        # that depends on the other envs stepped with it.
        self._batch_of: dict[int, tuple[int, int]] = {}

    @property
    def busy(self) -> bool:
        return self._waiting is not None or bool(self._queue)

    def add(self, played: Played) -> None:
        """Queue a played chunk: free-running first, resync once that is answered."""
        profile.tick("episodes", len(played))  # every lane's chunks pass here: progress
        if self.coverage is not None:
            # Every chunk of every lane passes here, in this process: the reference's states.
            self.coverage.add(played.states, len(played))
        indices = [plan.index for plan in played.plans]
        for index in indices:
            self._batch_of[index] = (min(indices), max(indices))
        if "free" in self.modes:
            compared = played.within(self.spec.levels.l3.free_horizon)
            request = l3.free_request(compared, self._free_pad)

            def free_answered(result: Any) -> None:
                self._judge("free", compared, result)
                if "resync" in self.modes:
                    self._add_resync(played)

            self._queue.append((request, free_answered))
        else:
            self._add_resync(played)
        self.pump()

    def _add_resync(self, played: Played) -> None:
        # Unpadded: a compiling backend pads a step batch to its own buckets, the ones L1's
        # batches met, so a resync chunk reuses the program L1 compiled.
        request = l3.resync_request(played)
        self._queue.append((request, lambda r: self._judge("resync", played, r)))

    def _judge(self, mode: str, played: Played, result: Any) -> None:
        seconds = self._port_seconds[mode]
        seconds["port_compile"] += float(result.get("compile_s", 0.0))
        seconds["port_run"] += float(result.get("run_s", 0.0))
        actual = l3.answer_steps(played, result, mode)
        # Resync's answer holds the state each step left (None: the port reads none back).
        read = result.get("state") if mode == "resync" else None
        if contract_problems(played.steps.obs, actual.obs):
            # A wrong dtype or shape is judged at once: joined with other chunks it would
            # be cast away.
            self._judge_now(mode, played, actual, read)
            return
        self._unjudged[mode].append((played, actual, read))
        if sum(p.transitions for p, _, _ in self._unjudged[mode]) >= JUDGE_ROWS:
            self._flush(mode)

    def _flush(self, mode: str) -> None:
        pending, self._unjudged[mode] = self._unjudged[mode], []
        if pending:
            played = Played.join([p for p, _, _ in pending])
            read = joined([r for _, _, r in pending])
            self._judge_now(mode, played, Steps.join([a for _, a, _ in pending]), read)

    def _judge_now(self, mode: str, played: Played, actual: Steps, read: Any) -> None:
        level = l3.judge_steps(self.spec, played, actual, mode, self.options, self.replay, read)
        if mode == "resync" and read is None:
            level.gaps.append(outputs_only("l3.resync"))
        self.results[mode].append(level)

    def finish(self) -> list[LevelResult]:
        """Every answer taken in and judged: one list of results per mode."""
        while self.busy:
            # Judge what has arrived while the port works on the last chunks.
            for mode in self.modes:
                self._flush(mode)
            self.pump(block=True, once=True)
        for mode in self.modes:
            self._flush(mode)
            if self.results[mode]:
                self.results[mode][0].seconds.update(self._port_seconds[mode])
            for level in self.results[mode]:
                for divergence in level.divergences:
                    if divergence.episode is not None:
                        divergence.batch = self._batch_of.get(divergence.episode)
        return [part for mode in self.modes for part in self.results[mode]]

    def pump(self, block: bool = False, once: bool = False) -> None:
        """Take in any answer that has arrived and send the next request. With `block`, wait
        for answers until every queued request is answered (`once`: for one answer)."""
        while True:
            if self._waiting is None and self._queue:
                request, answered = self._queue.popleft()
                self.worker.send(request)
                self._waiting = answered
            if self._waiting is None or (not block and not self.worker.ready()):
                return
            result = self.worker.receive()
            answered, self._waiting = self._waiting, None
            answered(result)
            if once:
                block = False


class Lane:
    """One reference player (this process's reference, or a reference worker) and the port
    worker answering for the chunks it plays."""

    def __init__(
        self,
        feed: PortFeed,
        chunks: Chunks,
        reference: Reference | None = None,
        player: Worker | None = None,
        spec_file: str = "",
    ) -> None:
        self.feed = feed
        self.chunks = chunks
        self.reference = reference
        self.player = player
        self.spec_file = spec_file
        self.loaded: Callable[[], None] = lambda: None
        # A reference worker's branch coverage: the files it measures, the arcs it took.
        self.measure: list[str] = []
        self.arcs: list[dict[str, Any]] = []

    def run(self) -> None:
        try:
            if self.player is None:
                self._run_here()
            else:
                self._run_remote()
            self.feed.finish()
        except BaseException:
            self.chunks.stop.set()
            raise

    def _run_here(self) -> None:
        assert self.reference is not None
        feed = self.feed
        while (chunk := self.chunks.take()) is not None:
            # The port worker is fed between episodes, so it works while the reference plays.
            played = l3.play_reference(
                self.reference, feed.spec, feed.options, chunk, between=feed.pump
            )
            feed.add(played)

    def _run_remote(self) -> None:
        player, feed = self.player, self.feed
        assert player is not None
        self.loaded()
        options = feed.options.__dict__
        chunk = self.chunks.take()
        if chunk is None:
            return
        player.send(self._play(options, chunk))
        while True:
            self._wait_for(player)
            answer = player.receive()
            if "arcs" in answer:
                self.arcs.append(answer.pop("arcs"))
            played = Played.from_wire(answer)
            # The next chunk is asked for before this one goes to the port: the reference
            # worker never waits on the verifier.
            chunk = self.chunks.take()
            if chunk is not None:
                player.send(self._play(options, chunk))
            feed.add(played)
            if chunk is None:
                return

    def _play(self, options: dict[str, Any], chunk: list[int]) -> PlayReference:
        return PlayReference(
            spec=self.spec_file, options=options, indices=chunk, measure=self.measure
        )

    def _wait_for(self, player: Worker) -> None:
        """Keep the port fed until the reference worker has its chunk ready (or the port's
        time is up: then its own receive, which knows the timeout, says so)."""
        poller = zmq.Poller()
        poller.register(player.socket, zmq.POLLIN)
        poller.register(self.feed.worker.socket, zmq.POLLIN)
        deadline = time.monotonic() + getattr(self.feed.worker, "timeout", 120.0)
        while self.feed.busy and not player.ready():
            if time.monotonic() > deadline:
                self.feed.pump(block=True, once=True)
                deadline = time.monotonic() + getattr(self.feed.worker, "timeout", 120.0)
            self.feed.pump()
            poller.poll(POLL_MS)


class LaneWorkers:
    """The processes of lanes 2..N, started at once so they load in the background: a
    reference worker and a port worker each."""

    def __init__(
        self, spec_file: str, lanes: int, timeout: float, port_side: Callable[[], Worker]
    ) -> None:
        self.spec_file = spec_file
        load = LoadReference(spec=spec_file)
        self.players: list[Worker] = []
        self.ports: list[Worker] = []
        self._loaded: set[int] = set()
        try:
            for _ in range(lanes - 1):
                self.players.append(PortWorker(timeout, load=load))
                self.ports.append(port_side())
        except BaseException:
            self.close()
            raise

    def wait_loaded(self, lane: int) -> None:
        """Take lane `lane`'s answers to loading the reference and the port (once)."""
        if lane not in self._loaded:
            self.players[lane].receive()
            self.ports[lane].receive()
            self._loaded.add(lane)

    def close(self) -> None:
        for worker in [*self.players, *self.ports]:
            worker.close()  # type: ignore[attr-defined]


def run_l3(
    spec: PortSpec,
    options: L3Options,
    replay: Replay,
    port: Worker,
    reference: Reference,
    workers: LaneWorkers | None = None,
    coverage: Coverage | None = None,
    measure: Measure | None = None,
) -> list[LevelResult]:
    """L3 over one lane here (`reference` and `port`) and one per pair of `workers`; each
    reference state played is counted into `coverage`, if given."""
    indices = l3.episode_indices(options)
    extra = [] if workers is None else list(zip(workers.players, workers.ports, strict=True))
    # A batch replay plays its episodes as the one chunk they were.
    size = len(indices) if options.batch else chunk_size(len(indices), 1 + len(extra))
    chunks = Chunks(indices, size, 1 + len(extra))
    feed = PortFeed(port, spec, options, size, replay, coverage)
    lanes = [Lane(feed, chunks, reference=reference)]
    for number, (player, lane_port) in enumerate(extra):
        feed = PortFeed(lane_port, spec, options, size, replay, coverage)
        lane = Lane(feed, chunks, player=player, spec_file=workers.spec_file)  # type: ignore[union-attr]
        lane.loaded = functools.partial(workers.wait_loaded, number)  # type: ignore[union-attr]
        lane.measure = measure.files if measure is not None else []
        lanes.append(lane)
    _run_all(lanes)
    if measure is not None:
        for lane in lanes:
            for arcs in lane.arcs:
                measure.add("l3", arcs)
    parts = {
        mode: [p for lane in lanes for p in lane.feed.results[mode]] for mode in lanes[0].feed.modes
    }
    return [l3.merge(found) for found in parts.values() if found]


def _run_all(lanes: list[Lane]) -> None:
    """The first lane in this thread, the others in threads of their own (they only wait on
    sockets and move arrays); the first failure is raised once all have stopped."""
    if len(lanes) == 1:
        lanes[0].run()
        return
    interval = sys.getswitchinterval()
    # This thread plays the reference; the lane threads need the interpreter only briefly,
    # but each time promptly, or their reference workers wait.
    sys.setswitchinterval(0.0005)
    try:
        with ThreadPoolExecutor(max_workers=len(lanes) - 1) as threads:
            futures = [threads.submit(lane.run) for lane in lanes[1:]]
            errors: list[BaseException] = []
            try:
                lanes[0].run()
            except BaseException as error:  # the others stop; raised below
                errors.append(error)
            for future in futures:
                failure = future.exception()
                if failure is not None:
                    errors.append(failure)
            if errors:
                raise errors[0]
    finally:
        sys.setswitchinterval(interval)
