"""Start a port worker process and talk to it with a timeout on every request."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import zmq

from envport.errors import PortError, PortRaised
from envport.io import profile
from envport.io.scratch import make_scratch, remove_tree
from envport.serve import answers, crate_cache, jail, toolchain
from envport.serve.launch import (
    builds_rust,
    own_paths,
    own_writable,
    request_limits,
    scratch_homes,
    with_compile_cache,
)
from envport.serve.ops import LoadPort, LoadReference, Op, PlayReference
from envport.serve.output import BoundedOutput, cut
from envport.serve.sandbox import Limits
from envport.serve.wire import ZERO_COPY_BYTES, Request, pack, unpack_response
from envport.serve.worker_env import reference_environment, worker_environment

# Bytes of a worker's output kept with a failed request (a panic's message is a few lines);
# also the most characters of its error message and of its traceback's frames.
MAX_FAILURE_OUTPUT = 4000
# Characters of a dead worker's last line of output kept in the error.
MAX_LAST_LINE = 500

# The longest Unix socket path (sizeof(sockaddr_un.sun_path) - 1).
IPC_PATH_MAX = int(getattr(zmq, "IPC_PATH_MAX_LEN", 107) or 107)


# The program a worker runs: the process loop of `envport.serve.worker` with the answers of
# the layers above (named, not imported: this layer runs it in another process).
WORKER_PROGRAM = "envport.verifiers.host"


def _prebuild(load: LoadPort, timeout: float, limits: Limits | None) -> None:
    """A crate the shared cache lacks is compiled first by a build worker, which loads
    nothing; the driver then stores the library under its own key. A failed build is left
    for the port's worker to repeat and report in its own words."""
    if load.build_cache is None or load.build_key is None:
        return
    root = Path(load.build_cache)
    if crate_cache.cached(root, load.build_key) is not None:
        return
    build = dataclasses.replace(load, build_only=True)
    with PortWorker(timeout=timeout, load=build, limits=limits, role="build") as builder:
        try:
            builder.receive()
        except PortError:
            return
        crate_cache.store(builder.scratch / crate_cache.BUILT, root, load.build_key)


class PortWorker:
    """One worker process hosting one port. Use as a context manager."""

    def __init__(
        self,
        timeout: float = 60.0,
        load: Op | None = None,
        limits: Limits | None = None,
        readable: list[Path] | None = None,
        role: str = "port",
    ) -> None:
        """`load`: the request the worker answers first, as soon as it starts (a port's
        `LoadPort`, a reference worker's `LoadReference`). `readable`: paths the worker reads
        besides those its load request names (the probes file of later `probe` requests)."""
        self.timeout = timeout
        if isinstance(load, LoadPort) and not load.build_only:
            _prebuild(load, timeout, limits)
            load = with_compile_cache(load)
        # What the worker hosts, as errors name it: a port, or a bench anchor (the user's
        # yardstick, whose failure is not the port's).
        self.role = role
        self._context: zmq.Context[zmq.Socket[bytes]] = zmq.Context.instance()
        self._socket = self._context.socket(zmq.PAIR)
        self._socket.setsockopt(zmq.LINGER, 0)
        # An answer is refused by its size before any of it is held: zmq reads a frame's
        # length first and drops a channel whose frame is over the limit, which the
        # monitor reports.
        self._answer_bytes = (limits or Limits()).answer_bytes
        self._socket.setsockopt(zmq.MAXMSGSIZE, self._answer_bytes)
        # And its values are counted before msgpack decodes it (`envport.serve.answer_size`).
        self._answer_values = (limits or Limits()).answer_values
        self._channel = self._socket.get_monitor_socket(zmq.EVENT_DISCONNECTED)
        self._scratch = make_scratch("envport-worker-")
        if len(f"{self._scratch}/channel") > IPC_PATH_MAX:
            # A Unix socket's path has a hard limit; a long TMPDIR (a test's, a user's) would
            # make the bind fail, so the scratch moves to the short /tmp.
            remove_tree(self._scratch)
            self._scratch = make_scratch("envport-worker-", "/tmp")
        # A Unix socket: it still reaches a worker inside its own network namespace.
        address = f"ipc://{self._scratch}/channel"
        self._socket.bind(address)
        # Its stdout and stderr: kept bounded in the driver, never a file the size of a flood.
        self._output = BoundedOutput((limits or Limits()).output_bytes)
        self._next_id = 0
        self._output_mark = 0
        # Where the output stood when the pending request was sent (`_output_mark` moves on
        # past what requests sent ahead of it printed).
        self._sent_mark = 0
        self._pending: int | None = None
        self._answered = True  # whether the pending request's answer was read
        # Requests sent and never waited for (a JAX port's warm-ups), oldest first: the
        # worker answers them before the pending one, which they must not be charged to.
        self._ahead: dict[int, str] = {}
        # The request awaiting an answer: what its answer must look like.
        self._pending_request: Op | None = None
        self._stopped: str | None = None
        self._sent_bytes = 0  # the pending request's size, for the profile
        command = [sys.executable, "-m", WORKER_PROGRAM, "--address", address]
        if not jail.available():
            # Inside the sandbox the worker cannot see this process; bwrap's
            # --die-with-parent ends it instead.
            command += ["--parent", str(os.getpid())]
        command += ["--limits", (limits or request_limits(timeout)).model_dump_json()]
        if load is not None:
            # The worker imports the port as soon as it starts, while the caller works; its
            # answer arrives as the reply to request 1.
            command += ["--load", json.dumps(load.args()), "--preload-op", load.op]
            self._next_id = self._pending = 1
            self._answered = False
            self._pending_op = load.op
            self._pending_request = load
        scratch = self._scratch
        building = isinstance(load, LoadPort) and load.build_only
        rust = builds_rust(load)
        # A Rust port's failure waits up to a second for its panic (`_failure_detail`).
        self._rust = rust
        try:
            command = jail.command_line(
                command,
                scratch,
                readable=[*own_paths(load), *(readable or [])],
                writable=own_writable(load),
                # A build worker leaves its library in `scratch` for the driver to take.
                work_bytes=None if building else (limits or Limits()).scratch_bytes,
                rust=rust,
            )
        except jail.SandboxUnavailable:
            self._close_channel()
            self._output.close()
            remove_tree(self._scratch)
            raise
        self.process = subprocess.Popen(
            command,
            cwd=self._scratch,
            env={
                **(
                    reference_environment(str(scratch))
                    if isinstance(load, LoadReference | PlayReference)
                    else worker_environment(str(scratch), toolchain.rust().bins if rust else ())
                ),
                **scratch_homes(scratch),
            },
            # A lifeline, never written to: the worker exits at its end, which the kernel
            # makes however the driver dies, even before bwrap arms --die-with-parent.
            stdin=subprocess.PIPE,
            stdout=self._output.writer,
            stderr=self._output.writer,
            # Its own session: a terminal's Ctrl-C reaches the driver, which decides what it
            # means and stops the worker; a worker dead of it would read as the port's failure.
            start_new_session=True,
        )
        self._output.started()

    def __enter__(self) -> PortWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def send(self, op: Op) -> None:
        """Send a request without waiting, so the caller can work while the port does."""
        if self._stopped is not None:
            raise PortError(self._stopped)
        if self.process.poll() is not None:
            raise PortError(f"{self.role} worker died before `{op.op}`: {self._death_note()}")
        if self._pending is not None and not self._answered:
            self._ahead[self._pending] = self._pending_op
        self._next_id += 1
        self._pending = self._next_id
        self._answered = False
        message = pack(op.request(self._next_id))
        # Where the worker's output stood: what it prints from here on is this request's.
        # Taken before the send: on a loaded machine the worker can answer, and this
        # reader take its failure's end line, before the line after the send runs.
        self._output_mark = self._sent_mark = self._output.total
        # Zero-copy for big messages (L3's batches): zmq keeps the bytes until they are sent.
        # (Flags positional: pyzmq's stubs type a run-time `copy` only in that form.)
        self._socket.send(message, 0, copy=len(message) < ZERO_COPY_BYTES)
        self._pending_op = op.op
        self._sent_bytes = len(message)
        self._pending_request = op

    def receive(self, timeout: float | None = None) -> Any:
        limit = self.timeout if timeout is None else timeout
        waiting = time.perf_counter()
        deadline = time.monotonic() + limit
        while True:
            if self._socket.poll(100):
                try:
                    frame = self._socket.recv()
                    response = unpack_response(frame, self._answer_values)
                except ValueError as error:
                    # The worker runs untrusted code: a forged frame is its failure, and the
                    # answer it stood for is the oldest request's, sent ahead or this one.
                    doing = self._busy()
                    if self._ahead:
                        self._ahead.pop(next(iter(self._ahead)))
                    else:
                        self._answered = True
                    raise PortError(
                        f"{self.role} sent a malformed answer to {doing}: {error}"
                    ) from None
                if response.id != self._pending:
                    ahead = self._ahead.pop(response.id, None)
                    if ahead is not None:
                        # Its wait is its own, and this request's time and output start now.
                        profile.request(ahead, time.perf_counter() - waiting, 0, len(frame))
                        waiting = time.perf_counter()
                        deadline = time.monotonic() + limit
                        self._output_mark = self._output.total
                    continue  # else a late answer to a request we gave up on
                self._answered = True
                # The verifier's wait on the port, not the port's own time: what the
                # verifier did between send and receive overlapped the port's work.
                waited = time.perf_counter() - waiting
                profile.request(self._pending_op, waited, self._sent_bytes, len(frame))
                if not response.ok:
                    raise PortRaised(
                        f"{self.role} failed in `{self._pending_op}`: "
                        f"{cut(response.error or '', MAX_FAILURE_OUTPUT)}",
                        detail=self._failure_detail(response.detail),
                    )
                wrong = answers.problem(self._pending_request, response.result)
                if wrong is not None:
                    raise PortError(
                        f"{self.role} sent a malformed answer to `{self._pending_op}`: {wrong}"
                    )
                return response.result
            if self.process.poll() is not None:
                raise PortError(f"{self.role} worker died in {self._busy()}: {self._death_note()}")
            if self._channel.poll(0):
                self._channel_cut()
            if time.monotonic() > deadline:
                self.kill()
                # Later requests fail at once with the same reason instead of blocking.
                self._stopped = (
                    f"{self.role} did not answer {self._busy()} within {limit:g} s; the "
                    f"worker was stopped (raise --timeout if the {self.role} is just slow; "
                    f"one that never answers loops without end on what it was given)"
                )
                raise PortError(self._stopped)

    def _channel_cut(self) -> None:
        """The channel dropped while the worker lives: an answer over the size limit (or a
        worker that closed it). A dying worker is reported as such."""
        try:
            self.process.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            self.kill()
            self._stopped = (
                f"{self.role}'s answer to {self._busy()} was refused: over "
                f"{self._answer_bytes} bytes, or the worker closed its channel; the worker "
                "was stopped"
            )
            raise PortError(self._stopped) from None
        raise PortError(f"{self.role} worker died in {self._busy()}: {self._death_note()}")

    def _busy(self) -> str:
        """The request the worker is on: the oldest sent ahead and not yet answered, else
        the pending one."""
        if self._ahead:
            return f"`{next(iter(self._ahead.values()))}` (sent ahead of `{self._pending_op}`)"
        return f"`{self._pending_op}`"

    @property
    def scratch(self) -> Path:
        """The worker's own writable directory (removed when the worker closes)."""
        return self._scratch

    @property
    def socket(self) -> zmq.Socket:
        """The channel's socket, for waiting on several workers at once."""
        return self._socket

    def ready(self) -> bool:
        """Whether an answer is waiting (receive() will not block)."""
        return bool(self._socket.poll(0))

    def request(self, op: Op, timeout: float | None = None) -> Any:
        self.send(op)
        return self.receive(timeout)

    def _failure_detail(self, frames: str | None) -> str:
        """The port's own words on a failed request: a Rust panic's message first (no cut
        of a long backtrace drops it), what it printed while answering, and the
        traceback's frames in the port."""
        # A Rust port's panic on a thread it left running can follow the answer: it gets a
        # grace for that (a second per raise would make a check that bisects Python
        # raises take minutes).
        grace = 1.0 if self._rust else 0.0
        printed, panic = self._output.failure_words(
            self._output_mark,
            self._pending or 0,
            MAX_FAILURE_OUTPUT,
            grace,
            panic=self._rust,
            sent=self._sent_mark,
        )
        parts = [f"panic: {panic}"] if panic else []
        if printed:
            parts.append(f"port output:\n{printed}")
        if frames:
            # The frames' lines quote the port's source: a line may be any length.
            frames = cut(frames.rstrip(), MAX_FAILURE_OUTPUT)
            parts.append(f"traceback (the port's frames):\n{frames}")
        return "\n".join(parts)

    def _death_note(self) -> str:
        how = jail.exit_note(self.process.returncode)
        # The reader may not have the last bytes a dying worker wrote yet; it ends at the
        # pipe's end, which the death brings, so the bound is only met under heavy load.
        self._output.settle(5.0)
        line = self._output.last_line(MAX_LAST_LINE)
        return f"{how}; last output: {line}" if line else how

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self._cut_lifeline()

    def _cut_lifeline(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self._socket.send(pack(Request(id=0, op="shutdown")), zmq.NOBLOCK)
                self.process.wait(timeout=2)
            except (zmq.ZMQError, subprocess.TimeoutExpired):
                self.kill()
        self._cut_lifeline()
        self._close_channel()
        self._output.close()
        # What the port left there is untrusted: removed without following a link.
        remove_tree(self._scratch)

    def _close_channel(self) -> None:
        self._socket.disable_monitor()
        self._channel.close()
        self._socket.close()
