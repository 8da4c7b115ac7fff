"""The process of a port worker: sandbox, socket, per-request CPU budget, the request loop.

What it answers is a `Handler` given by the program that runs it (`envport.verifiers.host`),
so this layer knows nothing of ports or levels. Everything a request raises is sent back as
its own error text, so a broken port is a failed check, not a dead verifier.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import sysconfig
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import zmq

from envport.serve import sandbox
from envport.serve.output import end_line
from envport.serve.wire import ZERO_COPY_BYTES, Op, Request, Response, pack, unpack_request

# The package name a port directory is imported as (envport.targets.loader): frames inside
# it are the port's own, which is what a repair needs to see.
PORT_PACKAGE = "envport_port"


class Handler(Protocol):
    """The worker's answers: `envport.verifiers.host.Host` (the program PortWorker starts)."""

    sandbox: dict[str, Any]

    def handle(self, request: Request) -> Any: ...


# envport's own code and the installed libraries: a frame in neither is the port's,
# wherever its directory is (a run's `port/`, a copy under /tmp).
_ENVPORT = str(Path(__file__).resolve().parent.parent) + os.sep
_LIBRARIES = tuple(
    {
        sysconfig.get_paths()[name] + os.sep
        for name in ("stdlib", "platstdlib", "purelib", "platlib")
    }
)


def _port_frames(error: BaseException) -> str:
    """The traceback lines that point into the port, which is what a repair needs; none
    when the port's code is not on the stack (envport's adapter refused its answer: the
    message says why, and envport's own frames would read as the port's)."""
    frames = traceback.extract_tb(error.__traceback__)
    inside = [
        f
        for f in frames
        if f"/{PORT_PACKAGE}" in f.filename
        or (not f.filename.startswith((_ENVPORT, *_LIBRARIES)) and not f.filename.startswith("<"))
    ]
    return "".join(traceback.format_list(inside))


def _exit_with_parent(parent: int) -> None:
    # A worker whose verifier died must not live on holding a CPU.
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(3)

    threading.Thread(target=watch, daemon=True).start()


def _exit_when_the_lifeline_ends() -> None:
    # The driver holds the write end of this worker's stdin and never writes: end of file
    # (or an error) means the driver is gone, however it died (envport.serve.client).
    def watch() -> None:
        try:
            while os.read(0, 4096):
                pass
        except OSError:
            pass
        os._exit(3)

    if not os.isatty(0):
        threading.Thread(target=watch, daemon=True).start()


def _answer(host: Handler, request: Request) -> Response:
    try:
        return Response(id=request.id, ok=True, result=host.handle(request))
    except BaseException as error:  # the port's failure is data to report, not a crash
        return Response(
            id=request.id,
            ok=False,
            error=f"{type(error).__name__}: {error}".strip(),
            detail=_port_frames(error),
        )


def _end_output(answer: Response) -> None:
    """After a failure, all the output it made goes out before its end line, and the line
    before the answer: the driver takes the bytes before it as this failure's own words
    (`BoundedOutput.failure_words`). A Rust panic's message and backtrace are written
    while it unwinds, so they are out already; Python's buffered streams are flushed."""
    if answer.ok:
        return
    # A port that closed or replaced a stream: its bytes are its own affair. With stderr
    # closed, the driver waits its bound for the end line and takes what came.
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError, AttributeError):
            stream.flush()
    with contextlib.suppress(OSError):
        os.write(2, end_line(answer.id))


def _send(socket: zmq.Socket, message: bytes) -> None:
    # Flags passed positionally: pyzmq's stubs type a run-time `copy` only in that form.
    socket.send(message, 0, copy=len(message) < ZERO_COPY_BYTES)


def _respond(socket: zmq.Socket, answer: Response) -> None:
    """Send the answer, a failure's end line first. An answer the wire refuses (an object or
    structured array the port returned) is the port's failure, reported as such, not a
    worker that dies without a word; it too gets its end line, or the driver waits its
    bound for one."""
    try:
        message = pack(answer)
    except (TypeError, ValueError) as error:
        answer = Response(
            id=answer.id, ok=False, error=f"the port's answer cannot cross the wire: {error}"
        )
        message = pack(answer)
    _end_output(answer)
    _send(socket, message)


def serve(
    address: str,
    host: Handler,
    preload: dict[str, Any] | None = None,
    limits: sandbox.Limits | None = None,
    preload_op: Op = "load",
    parent: int | None = None,
) -> None:
    _exit_with_parent(parent if parent is not None else os.getppid())
    _exit_when_the_lifeline_ends()
    applied = sandbox.apply_process_limits(limits or sandbox.Limits())
    sandbox.install_guard([Path.cwd()])
    budget = (limits or sandbox.Limits()).cpu_seconds_per_request
    context = zmq.Context()
    socket = context.socket(zmq.PAIR)
    socket.setsockopt(zmq.LINGER, 1000)
    socket.connect(address)
    host.sandbox = {"network": applied.network, "memory_bytes": applied.memory_bytes}
    if preload is not None:
        with sandbox.cpu_budget(budget):
            answer = _answer(host, Request(id=1, op=preload_op, args=preload))
        _respond(socket, answer)
    while True:
        request = unpack_request(socket.recv())
        if request.op == "shutdown":
            socket.send(pack(Response(id=request.id, ok=True)))
            break
        with sandbox.cpu_budget(budget):
            answer = _answer(host, request)
        _respond(socket, answer)
    socket.close()
    context.term()
    # Nothing is left to save: skip interpreter teardown (slow with JAX loaded).
    os._exit(0)


def run_worker(make_host: Callable[[], Handler]) -> None:
    parser = argparse.ArgumentParser(description="envport port worker (started by envport)")
    parser.add_argument("--address", required=True)
    # The starter's pid, given rather than read: a worker whose starter died before it ran
    # would otherwise take init for its parent and live on.
    parser.add_argument("--parent", type=int)
    parser.add_argument("--load", help="JSON arguments of a load request to run at start-up")
    parser.add_argument("--preload-op", default="load", help="the op --load's arguments are for")
    parser.add_argument("--limits", help="JSON sandbox limits")
    args = parser.parse_args()
    limits = sandbox.Limits.model_validate_json(args.limits) if args.limits else None
    serve(
        args.address,
        make_host(),
        json.loads(args.load) if args.load else None,
        limits,
        args.preload_op,
        args.parent,
    )
