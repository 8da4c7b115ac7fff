"""L3 over lanes: the reference's play, the port's answers and the judging, overlapped.

A lane is one reference (in this process, or a reference worker) and one port worker. Its
episodes go in chunks: while the reference plays chunk k+1, the port worker runs chunk k
free-running and then resynced, and the verifier judges what came back. So one lane keeps
two cores busy, and `--workers N` runs N lanes side by side: N reference workers and N port
workers, started with the run so they load while L1 and L2 run.

The port sees a chunk's reference states (the resync request) only after it has answered
the chunk's free-running request: a port that reads its requests learns nothing from them
that it could replay.
"""

from __future__ import annotations

import math
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

import numpy as np
import zmq

from envport.serve.client import PortWorker
from envport.spec import PortSpec
from envport.verifiers import l3
from envport.verifiers.compare import STEP_FIELDS, Steps, contract_problems
from envport.verifiers.divergence import LevelResult
from envport.verifiers.played import Played
from envport.verifiers.reference import Reference

# Chunks per lane: enough that the port's work hides behind the reference's play and the
# last chunk (whose port work cannot hide) is small; each chunk costs two round trips.
CHUNKS_PER_LANE = 3
MIN_CHUNK, MAX_CHUNK = 32, 250
# Answers are judged in batches of at least this many rows: judging costs mostly per call,
# and a small run is judged once, at its end.
JUDGE_ROWS = 20_000
# How long a lane waits on its sockets before looking again (a dead worker is noticed by
# the worker's own receive, which polls its process).
POLL_MS = 50


class Worker(Protocol):
    """A port or reference worker, local (PortWorker) or remote (EnvClient)."""

    socket: Any

    def send(self, op: str, **args: Any) -> None: ...
    def receive(self, timeout: float | None = None) -> Any: ...
    def ready(self) -> bool: ...


def chunk_size(episodes: int) -> int:
    return max(MIN_CHUNK, min(MAX_CHUNK, math.ceil(episodes / CHUNKS_PER_LANE)))


class PortFeed:
    """One port worker's L3 requests: one outstanding at a time, each answer judged as it
    arrives."""

    def __init__(
        self, worker: Worker, spec: PortSpec, options: l3.L3Options, chunk: int, replay: str
    ) -> None:
        self.worker = worker
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
        self._resync_pad = [chunk * options.steps]
        self._queue: deque[tuple[str, dict[str, Any], Callable[[Any], None]]] = deque()
        self._waiting: Callable[[Any], None] | None = None
        self._unjudged: dict[str, list[tuple[Played, Steps]]] = {mode: [] for mode in self.modes}
        self._port_seconds: dict[str, dict[str, float]] = {
            mode: {"port_compile": 0.0, "port_run": 0.0} for mode in self.modes
        }

    @property
    def busy(self) -> bool:
        return self._waiting is not None or bool(self._queue)

    def add(self, played: Played) -> None:
        """Queue a played chunk: free-running first, resync once that is answered."""
        if "free" in self.modes:
            compared = played.within(self.spec.levels.l3.free_horizon)
            request = {**l3.free_request(compared), "pad_to": self._free_pad}

            def free_answered(result: Any) -> None:
                self._judge("free", compared, result)
                if "resync" in self.modes:
                    self._add_resync(played)

            self._queue.append(("rollout", request, free_answered))
        else:
            self._add_resync(played)
        self.pump()

    def _add_resync(self, played: Played) -> None:
        request = {**l3.resync_request(played), "pad_to": self._resync_pad}
        self._queue.append(("step_batch", request, lambda r: self._judge("resync", played, r)))

    def _judge(self, mode: str, played: Played, result: Any) -> None:
        seconds = self._port_seconds[mode]
        seconds["port_compile"] += float(result.get("compile_s", 0.0))
        seconds["port_run"] += float(result.get("run_s", 0.0))
        actual = l3.answer_steps(played, result, mode)
        if contract_problems(played.steps.obs, actual.obs):
            # A wrong dtype or shape is judged at once: joined with other chunks it would
            # be cast away.
            self._judge_now(mode, played, actual)
            return
        self._unjudged[mode].append((played, actual))
        if sum(p.transitions for p, _ in self._unjudged[mode]) >= JUDGE_ROWS:
            self._flush(mode)

    def _flush(self, mode: str) -> None:
        pending, self._unjudged[mode] = self._unjudged[mode], []
        if pending:
            played = Played.join([p for p, _ in pending])
            parts = [a for _, a in pending]
            actual = Steps(*(np.concatenate([getattr(a, f) for a in parts]) for f in STEP_FIELDS))
            self._judge_now(mode, played, actual)

    def _judge_now(self, mode: str, played: Played, actual: Steps) -> None:
        level = l3.judge_steps(self.spec, played, actual, mode, self.options, self.replay)
        self.results[mode].append(level)

    def finish(self) -> list[LevelResult]:
        """Every answer taken in and judged: one list of results per mode."""
        while self._waiting is not None:
            # Judge what has arrived while the port works on the last chunks.
            for mode in self.modes:
                self._flush(mode)
            self.pump(block=True)
        for mode in self.modes:
            self._flush(mode)
            if self.results[mode]:
                self.results[mode][0].seconds.update(self._port_seconds[mode])
        return [part for mode in self.modes for part in self.results[mode]]

    def pump(self, block: bool = False) -> None:
        """Take in any answer that has arrived and send the next request; with `block`, run
        until every queued request is answered."""
        while True:
            if self._waiting is not None:
                if not block and not self.worker.ready():
                    return
                result = self.worker.receive()
                answered, self._waiting = self._waiting, None
                answered(result)
            if not self._queue:
                return
            op, request, answered = self._queue.popleft()
            self.worker.send(op, **request)
            self._waiting = answered


class Lane:
    """Some episodes, played by one reference and answered by one port worker."""

    def __init__(
        self,
        feed: PortFeed,
        indices: list[int],
        chunk: int,
        reference: Reference | None = None,
        player: Worker | None = None,
        spec_file: str = "",
    ) -> None:
        self.feed = feed
        self.chunks = [indices[i : i + chunk] for i in range(0, len(indices), chunk)]
        self.reference = reference
        self.player = player
        self.spec_file = spec_file
        self.play_seconds = 0.0

    def run(self, stop: threading.Event) -> None:
        if self.player is None:
            self._run_here(stop)
        else:
            self._run_remote(stop)
        self.feed.finish()

    def _run_here(self, stop: threading.Event) -> None:
        assert self.reference is not None
        feed = self.feed
        for chunk in self.chunks:
            if stop.is_set():
                return
            # The port worker is fed between episodes, so it works while the reference plays.
            played = l3.play_reference(
                self.reference, feed.spec, feed.options, chunk, between=feed.pump
            )
            feed.add(played)

    def _run_remote(self, stop: threading.Event) -> None:
        player, feed = self.player, self.feed
        assert player is not None
        player.receive()  # its answer to loading the reference
        options = feed.options.__dict__
        player.send("play_reference", spec=self.spec_file, options=options, indices=self.chunks[0])
        for number in range(len(self.chunks)):
            if stop.is_set():
                return
            self._wait_for(player)
            played = Played.from_wire(player.receive())
            if number + 1 < len(self.chunks):
                nxt = self.chunks[number + 1]
                player.send("play_reference", spec=self.spec_file, options=options, indices=nxt)
            feed.add(played)

    def _wait_for(self, player: Worker) -> None:
        """Keep the port fed until the reference worker has its chunk ready."""
        poller = zmq.Poller()
        poller.register(player.socket, zmq.POLLIN)
        poller.register(self.feed.worker.socket, zmq.POLLIN)
        while self.feed.busy and not player.ready():
            self.feed.pump()
            poller.poll(POLL_MS)


class LaneWorkers:
    """The extra processes of a multi-lane L3, started at once so they load in the
    background: a reference worker per lane, and a port worker for every lane but the first
    (which uses the verifier's own port worker)."""

    def __init__(
        self, spec_file: str, lanes: int, timeout: float, port_side: Callable[[], Worker]
    ) -> None:
        self.spec_file = spec_file
        load = {"spec": spec_file}
        self.players: list[Worker] = []
        self.ports: list[Worker] = []
        try:
            for _ in range(lanes):
                self.players.append(PortWorker(timeout, load=load, preload_op="load_reference"))
            for _ in range(lanes - 1):
                self.ports.append(port_side())
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        for worker in [*self.players, *self.ports]:
            worker.close()  # type: ignore[attr-defined]


def run_l3(
    spec: PortSpec,
    options: l3.L3Options,
    replay: str,
    port: Worker,
    reference: Reference | None = None,
    workers: LaneWorkers | None = None,
) -> list[LevelResult]:
    """L3 in lanes: here with `reference` (one lane), or over `workers`' lanes."""
    indices = l3.episode_indices(options)
    count = 1 if workers is None else len(workers.players)
    shares = [indices[i::count] for i in range(count)]
    chunk = chunk_size(max(len(share) for share in shares))
    lanes = []
    for number, share in enumerate(shares):
        if workers is None:
            feed = PortFeed(port, spec, options, chunk, replay)
            lanes.append(Lane(feed, share, chunk, reference=reference))
            continue
        lane_port = port if number == 0 else workers.ports[number - 1]
        if number > 0:
            lane_port.receive()  # its answer to loading the port
        feed = PortFeed(lane_port, spec, options, chunk, replay)
        player = workers.players[number]
        lanes.append(Lane(feed, share, chunk, player=player, spec_file=workers.spec_file))
    _run_all([lane for lane in lanes if lane.chunks])
    parts = {
        mode: [p for lane in lanes for p in lane.feed.results[mode]] for mode in lanes[0].feed.modes
    }
    return [l3.merge(found) for found in parts.values()]


def _run_all(lanes: list[Lane]) -> None:
    stop = threading.Event()
    if len(lanes) == 1:
        lanes[0].run(stop)
        return

    def run(lane: Lane) -> None:
        try:
            lane.run(stop)
        except BaseException:
            stop.set()  # the other lanes stop after their current chunk
            raise

    with ThreadPoolExecutor(max_workers=len(lanes)) as threads:
        futures = [threads.submit(run, lane) for lane in lanes]
        for future in futures:
            future.result()
