"""EnvClient: talk to an `envport serve` process as if it were a local worker.

It mirrors `PortWorker` (send, receive, request, close), so the verifier does not care
where the env runs. Its first answer is the server's preload (what `describe` returns),
standing in for a local worker's answer to `load`.
"""

from __future__ import annotations

import time
from typing import Any

import msgpack
import zmq

from envport.errors import PortError
from envport.io import profile
from envport.serve.ops import Describe, Op
from envport.serve.sandbox import Limits
from envport.serve.token import client_token
from envport.serve.wire import ZERO_COPY_BYTES, Request, pack, unpack_response


class EnvClient:
    def __init__(self, address: str, timeout: float = 120.0, token: str | None = None) -> None:
        """`token`: the server's (envport.serve.token); by default ENVPORT_SERVE_TOKEN."""
        self.address = address
        self.timeout = timeout
        self._token = client_token() if token is None else token
        self._socket: zmq.Socket[bytes] = zmq.Context.instance().socket(zmq.DEALER)
        self._socket.setsockopt(zmq.LINGER, 0)
        # A server is no more trusted than a worker: an answer over the limit is refused by
        # zmq before any of it is held.
        self._socket.setsockopt(zmq.MAXMSGSIZE, Limits().answer_bytes)
        self._socket.connect(address)
        self._next_id = 0
        self._sent_bytes = 0
        self.send(Describe())

    def __enter__(self) -> EnvClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def send(self, op: Op) -> None:
        self._next_id += 1
        self._pending, self._pending_op = self._next_id, op.op
        message = pack(op.request(self._next_id).model_copy(update={"token": self._token}))
        # Zero-copy for big messages (L3's batches): zmq keeps the bytes until they are sent.
        # (Flags positional: pyzmq's stubs type a run-time `copy` only in that form.)
        self._socket.send(message, 0, copy=len(message) < ZERO_COPY_BYTES)
        self._sent_bytes = len(message)

    def receive(self, timeout: float | None = None) -> Any:
        limit = self.timeout if timeout is None else timeout
        waiting = time.perf_counter()
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            if self._socket.poll(100):
                try:
                    frame = self._socket.recv()
                    response = unpack_response(frame)
                except (ValueError, TypeError, msgpack.UnpackException) as error:
                    # The server is no more trusted than a worker (ValidationError is a
                    # ValueError).
                    raise PortError(
                        f"{self.address} sent a malformed answer to `{self._pending_op}`: "
                        f"{str(error).splitlines()[0] if str(error) else type(error).__name__}"
                    ) from None
                if response.id != self._pending:
                    continue
                if not response.ok:
                    raise PortError(response.error or f"server failed in `{self._pending_op}`")
                # As a local worker's: the wait on the server, with the bytes both ways.
                waited = time.perf_counter() - waiting
                profile.request(self._pending_op, waited, self._sent_bytes, len(frame))
                return response.result
        # Tell the server to drop the request if it has not started it: we have gone.
        cancel = Request(id=0, op="cancel", args={"id": self._pending}, token=self._token)
        self._socket.send(pack(cancel))
        raise PortError(
            f"no answer to `{self._pending_op}` from {self.address} within {limit:g} s "
            "(is `envport serve` running there?)"
        )

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

    def close(self) -> None:
        self._socket.close()
