"""EnvServer: a reference or a port behind a ZMQ address, served by a pool of workers.

Clients (`EnvClient`) send the same typed requests a verifier sends a local worker. The
server dispatches each to the least-busy worker, health-checks idle workers, replaces a
dead or stuck one and re-dispatches its request once, drops queued requests whose client
cancelled them, and on SIGTERM stops taking requests, finishes those in flight and shuts
its workers down. Nothing blocking runs on the event loop: decoding, encoding and waiting
on workers happen in threads, and a lag monitor proves it.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import zmq
import zmq.asyncio
from pydantic import ValidationError

from envport.errors import PortError
from envport.serve.client import PortWorker
from envport.serve.lag import LagMonitor, LagSummary
from envport.serve.ops import Op, Ping, UnknownOp, decode
from envport.serve.sandbox import Limits
from envport.serve.token import TOKEN_VARIABLE, matches
from envport.serve.wire import Request, Response, pack, unpack_request

HEALTH_EVERY = 5.0
PING_TIMEOUT = 10.0
# The largest request taken: L3's biggest batches are far below it.
MAX_REQUEST_BYTES = Limits().answer_bytes
MAX_CANCELLED = 4096
REFUSED = (
    f"refused: this server takes requests only with its token; set {TOKEN_VARIABLE} to the "
    "token `envport serve` printed (or verify's --port-server-token-file)"
)


def _one_line(error: BaseException) -> str:
    if isinstance(error, ValidationError):  # a request of the wrong shape: which field
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the request"
        return f"{where}: {first['msg']}"[:300]
    lines = str(error).strip().splitlines()
    return f"{type(error).__name__}: {lines[0][:300]}" if lines else type(error).__name__


@dataclass
class _Slot:
    worker: PortWorker
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    queued: int = 0
    preloaded: Any = None


class EnvServer:
    def __init__(
        self,
        address: str,
        workers: int,
        preload: Op,
        token: str,
        timeout: float = 120.0,
        limits: Limits | None = None,
        readable: list[Path] | None = None,
        max_request_bytes: int = MAX_REQUEST_BYTES,
    ) -> None:
        """`token`: the secret every request must carry (envport.serve.token). `readable`:
        what a worker may read besides its port (the spec's harness files)."""
        self.address = address
        self.token = token
        self.max_request_bytes = max_request_bytes
        self.readable = readable
        self.size = workers
        self.preload = preload
        self.timeout = timeout
        self.limits = limits
        self.slots: list[_Slot] = []
        self.restarts = 0
        self.served = 0
        self.lag = LagMonitor()
        # Requests cancelled by their clients, oldest first.
        self._cancelled: dict[tuple[bytes, int], None] = {}
        self._affinity: dict[bytes, _Slot] = {}
        self._stopping = asyncio.Event()
        self._in_flight: set[asyncio.Task[None]] = set()

    def _spawn(self) -> PortWorker:
        return PortWorker(
            timeout=self.timeout, load=self.preload, limits=self.limits, readable=self.readable
        )

    async def _start_slot(self) -> _Slot:
        slot = _Slot(await asyncio.to_thread(self._spawn))
        slot.preloaded = await asyncio.to_thread(slot.worker.receive)
        return slot

    async def _replace(self, slot: _Slot) -> None:
        await asyncio.to_thread(slot.worker.close)
        fresh = await self._start_slot()
        slot.worker, slot.preloaded = fresh.worker, fresh.preloaded
        self.restarts += 1

    async def _call(self, identity: bytes, request: Request) -> Response:
        if request.op == "describe":
            # What the workers were loaded with: a client's stand-in for its own `load`.
            return Response(id=request.id, ok=True, result=self.slots[0].preloaded)
        # A live session (and a live VectorEnv) stays on the worker that holds it.
        live = request.op.startswith(("session_", "vector_"))
        slot = self._affinity.get(identity) if live else None
        if slot is None:
            slot = min(self.slots, key=lambda s: s.queued + s.lock.locked())
        try:
            op = decode(request)
        except UnknownOp as error:
            return Response(id=request.id, ok=False, error=str(error))
        if request.op in ("session_load", "vector_open"):
            self._affinity[identity] = slot
        slot.queued += 1
        try:
            async with slot.lock:
                for attempt in (1, 2):
                    try:
                        result = await asyncio.to_thread(slot.worker.request, op)
                        return Response(id=request.id, ok=True, result=result)
                    except PortError as error:
                        dead = slot.worker.process.poll() is not None
                        if not dead:
                            # The port answered with its own error: that is the answer.
                            return Response(id=request.id, ok=False, error=str(error))
                        await self._replace(slot)
                        if attempt == 2:
                            return Response(id=request.id, ok=False, error=str(error))
        finally:
            slot.queued -= 1
        raise AssertionError("unreachable")

    async def _handle(
        self, router: zmq.asyncio.Socket, identity: bytes, frames: list[bytes]
    ) -> None:
        try:
            if len(frames) != 1:
                # A client's multipart message: answered, never unpacked into the loop.
                reply: Response | None = Response(
                    id=0,
                    ok=False,
                    error=f"malformed request: one frame expected, {len(frames)} came",
                )
            else:
                reply = await self._answer(identity, frames[0])
        except Exception as error:  # what a request makes go wrong must not stop the server
            reply = Response(id=0, ok=False, error=f"server failed: {_one_line(error)}")
        if reply is None:
            return
        self.served += 1
        payload = await asyncio.to_thread(pack, reply)
        await router.send_multipart([identity, payload])

    async def _answer(self, identity: bytes, data: bytes) -> Response | None:
        """The reply to one message, or None when none is owed (a cancel, a request its
        client cancelled). Anything malformed is an error reply, never an exception."""
        try:
            request = await asyncio.to_thread(unpack_request, data)
        except Exception as error:
            return Response(id=0, ok=False, error=f"malformed request: {_one_line(error)}")
        if not matches(request.token, self.token):
            # Before anything else: an unknown client learns nothing but that it was refused.
            return Response(id=request.id, ok=False, error=REFUSED)
        if request.op == "cancel":
            cancelled = request.args.get("id")
            if type(cancelled) is not int:
                return Response(
                    id=request.id, ok=False, error="malformed `cancel`: `id` must be an integer"
                )
            self._cancel((identity, cancelled))
            return None
        if (identity, request.id) in self._cancelled:
            del self._cancelled[(identity, request.id)]
            return None
        try:
            reply = await self._call(identity, request)
        except Exception as error:
            reply = Response(
                id=request.id, ok=False, error=f"`{request.op}` failed: {_one_line(error)}"
            )
        if (identity, request.id) in self._cancelled:  # the client went away meanwhile
            del self._cancelled[(identity, request.id)]
            return None
        return reply

    def _cancel(self, key: tuple[bytes, int]) -> None:
        # Bounded: a client sending cancels for requests it never made must not grow it.
        self._cancelled[key] = None
        while len(self._cancelled) > MAX_CANCELLED:
            del self._cancelled[next(iter(self._cancelled))]

    async def _health(self) -> None:
        while not self._stopping.is_set():
            await asyncio.sleep(HEALTH_EVERY)
            for slot in self.slots:
                if slot.lock.locked():
                    continue
                async with slot.lock:
                    try:
                        await asyncio.to_thread(slot.worker.request, Ping(), PING_TIMEOUT)
                    except PortError:
                        await self._replace(slot)

    async def serve(self, ready: asyncio.Event | None = None) -> LagSummary:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            # Not possible outside the main thread (a server started by a test).
            with contextlib.suppress(RuntimeError, ValueError):
                loop.add_signal_handler(sig, self._stopping.set)
        self.lag.start()
        self.slots = list(await asyncio.gather(*(self._start_slot() for _ in range(self.size))))
        context = zmq.asyncio.Context.instance()
        router = context.socket(zmq.ROUTER)
        router.setsockopt(zmq.LINGER, 0)
        # A message over the limit is refused by zmq from its length alone, before any of it
        # is held, and its sender disconnected; the server serves on.
        router.setsockopt(zmq.MAXMSGSIZE, self.max_request_bytes)
        router.bind(self.address)
        health = loop.create_task(self._health())
        if ready is not None:
            ready.set()
        stop = loop.create_task(self._stopping.wait())
        try:
            while not self._stopping.is_set():
                receive = asyncio.ensure_future(router.recv_multipart())
                done, _ = await asyncio.wait({receive, stop}, return_when=asyncio.FIRST_COMPLETED)
                if receive not in done:
                    receive.cancel()
                    break
                identity, *frames = receive.result()
                task = loop.create_task(self._handle(router, identity, frames))
                self._in_flight.add(task)
                task.add_done_callback(self._in_flight.discard)
            # Graceful: what was accepted is answered before the workers go.
            if self._in_flight:
                await asyncio.wait(self._in_flight, timeout=self.timeout)
        finally:
            health.cancel()
            stop.cancel()
            router.close()
            for slot in self.slots:
                await asyncio.to_thread(slot.worker.close)
        return await self.lag.stop()

    def stop(self) -> None:
        self._stopping.set()
