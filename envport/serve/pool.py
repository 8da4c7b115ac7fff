"""A pool of worker processes with the same preload, spreading tasks over them.

Each task goes to an idle worker (least busy: a worker takes one task at a time). A worker
that dies or gets stuck on a task is replaced by a fresh one and the task is tried once
more; a second failure is the task's answer. Threads only wait on sockets: the work
happens in the worker processes, so N workers use N cores.
"""

from __future__ import annotations

import queue
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from envport.errors import PortError
from envport.serve.client import PortWorker
from envport.serve.sandbox import Limits


class WorkerPool:
    def __init__(
        self,
        size: int,
        preload_op: str,
        preload: dict[str, Any],
        timeout: float = 120.0,
        limits: Limits | None = None,
    ) -> None:
        if size < 1:
            raise ValueError("a pool needs at least one worker")
        self.size = size
        self._spawn_args = (timeout, preload, limits, preload_op)
        self._idle: queue.Queue[PortWorker] = queue.Queue()
        self._all: list[PortWorker] = []
        self.restarts = 0
        for _ in range(size):
            self._idle.put(self._spawn())

    def _spawn(self) -> PortWorker:
        timeout, preload, limits, preload_op = self._spawn_args
        worker = PortWorker(timeout=timeout, load=preload, limits=limits, preload_op=preload_op)
        worker.preloaded = None  # type: ignore[attr-defined]
        self._all.append(worker)
        return worker

    def _preloaded(self, worker: PortWorker) -> Any:
        if worker.preloaded is None:  # type: ignore[attr-defined]
            worker.preloaded = worker.receive()  # type: ignore[attr-defined]
        return worker.preloaded  # type: ignore[attr-defined]

    def _run(self, op: str | None, task: dict[str, Any]) -> Any:
        for attempt in (1, 2):
            worker = self._idle.get()
            try:
                preloaded = self._preloaded(worker)
                result = preloaded if op is None else worker.request(op, **task)
            except PortError:
                worker.close()
                self.restarts += 1
                self._idle.put(self._spawn())
                if attempt == 2:
                    raise
                continue
            self._idle.put(worker)
            return result
        raise AssertionError("unreachable")

    def preloads(self) -> list[Any]:
        """Every worker's answer to its preload (waits for them all)."""
        return [self._preloaded(worker) for worker in list(self._all) if not _closed(worker)]

    def map(self, op: str, tasks: Sequence[dict[str, Any]]) -> list[Any]:
        """Run `op` once per task, spread over the workers; results in task order."""
        with ThreadPoolExecutor(max_workers=self.size) as threads:
            return list(threads.map(lambda task: self._run(op, task), tasks))

    def ping(self) -> float:
        """Round-trip seconds of one request to an idle worker."""
        import time

        worker = self._idle.get()
        try:
            self._preloaded(worker)
            started = time.perf_counter()
            worker.request("ping")
            return time.perf_counter() - started
        finally:
            self._idle.put(worker)

    def close(self) -> None:
        for worker in self._all:
            if not _closed(worker):
                worker.close()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _closed(worker: PortWorker) -> bool:
    return worker._socket.closed
