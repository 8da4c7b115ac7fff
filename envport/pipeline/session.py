"""One driver session's machinery: the run lock, the event loop, the lag monitor.

One process drives a run at a time (`RunLock`). Model calls are coroutines run on one
event loop for the whole session, with a monitor that measures how late the loop wakes:
the model layer does its own disk and network work and must keep the loop responsive.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from pathlib import Path
from typing import TypeVar

from envport import interrupts
from envport.runs.layout import RunLock
from envport.serve.lag import LagMonitor, LagSummary

T = TypeVar("T")


class Session:
    def __init__(self, root: Path) -> None:
        self.lock = RunLock(root)
        self.lag = LagMonitor(interval=0.005)
        self._runner: asyncio.Runner | None = None

    def acquire(self) -> None:
        self.lock.acquire()

    def open_loop(self) -> None:
        self._runner = asyncio.Runner()
        interrupts.settle_in(self._runner.get_loop())

    def close(self) -> None:
        """Close the loop (if opened) and release the lock."""
        try:
            if self._runner is not None:
                self._runner.close()
        finally:
            self.lock.release()

    def run(self, call: Awaitable[T]) -> T:
        """Run a model call on the session's loop, watched by the lag monitor."""
        assert self._runner is not None, "the session's loop is not open"
        return self._runner.run(self._watched(call))

    async def _watched(self, call: Awaitable[T]) -> T:
        self.lag.start()
        try:
            return await call
        finally:
            await self.lag.stop()

    def lag_summary(self) -> LagSummary | None:
        """The session's event-loop lag during model calls, if any was measured."""
        return self.lag.summary() if self.lag.lags else None
