"""Event-loop lag: how late a sleeping task wakes up is how long something blocked the loop.

One blocking call in an env server stalls every rollout it serves, so the server and the
driver measure it all the time and say so.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

import numpy as np
from pydantic import BaseModel

log = logging.getLogger("envport.lag")


class LagSummary(BaseModel):
    samples: int
    min_ms: float
    mean_ms: float
    p50_ms: float
    p90_ms: float
    p99_ms: float
    max_ms: float

    def line(self) -> str:
        return (
            f"event-loop lag over {self.samples} samples: min {self.min_ms:.2f} ms, "
            f"mean {self.mean_ms:.2f}, p50 {self.p50_ms:.2f}, p90 {self.p90_ms:.2f}, "
            f"p99 {self.p99_ms:.2f}, max {self.max_ms:.2f} ms"
        )


class LagMonitor:
    def __init__(self, interval: float = 0.02, log_every: float = 30.0) -> None:
        self.interval = interval
        self.log_every = log_every
        self.lags: list[float] = []
        self._task: asyncio.Task[None] | None = None

    async def _watch(self) -> None:
        loop = asyncio.get_running_loop()
        last_log = loop.time()
        while True:
            before = loop.time()
            await asyncio.sleep(self.interval)
            self.lags.append(max(0.0, loop.time() - before - self.interval))
            if loop.time() - last_log >= self.log_every:
                last_log = loop.time()
                log.info(self.summary().line())

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._watch())

    async def stop(self) -> LagSummary:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        return self.summary()

    def summary(self) -> LagSummary:
        values = np.asarray(self.lags or [0.0]) * 1e3
        return LagSummary(
            samples=len(self.lags),
            min_ms=float(values.min()),
            mean_ms=float(values.mean()),
            p50_ms=float(np.percentile(values, 50)),
            p90_ms=float(np.percentile(values, 90)),
            p99_ms=float(np.percentile(values, 99)),
            max_ms=float(values.max()),
        )
