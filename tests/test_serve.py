"""`envport serve` and its client: a served port verifies like a local one; a worker that
dies is replaced while the server lives on; SIGTERM ends it cleanly with a lag summary."""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import msgpack
import pytest
import zmq

from envport.errors import PortError
from envport.serve.ops import Ping, StepBatch
from envport.serve.remote import EnvClient
from envport.serve.wire import Response, unpack_response

from helpers import CARTPOLE, NUMPY_PORT, ROOT, run_envport, user_env


def free_address() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"tcp://127.0.0.1:{probe.getsockname()[1]}"


# The tests' servers take this token from the environment, as a user's would.
TOKEN = "test-serve-token-0123456789"


def start_server(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    server = subprocess.Popen(
        [sys.executable, "-m", "envport", "serve", str(CARTPOLE), *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env if env is not None else user_env(ENVPORT_SERVE_TOKEN=TOKEN),
    )
    assert server.stdout is not None
    assert "serving" in server.stdout.readline()
    return server


def stop_server(server: subprocess.Popen) -> str:
    server.send_signal(signal.SIGTERM)
    out, err = server.communicate(timeout=60)
    assert server.returncode == 0, err
    return out + err


@pytest.mark.slow
def test_served_port_verifies_and_stops_with_a_lag_summary(tmp_path: Path) -> None:
    (token_file := tmp_path / "token").write_text(TOKEN + "\n")
    address = free_address()
    server = start_server("--port", str(NUMPY_PORT), "--address", address, "--workers", "2")
    try:
        done = run_envport(
            "verify", str(CARTPOLE), "--port", str(NUMPY_PORT), "--port-server", address,
            "--port-server-token-file", str(token_file),
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        assert "l2.interaction" in done.stdout and "verified" in done.stdout
    finally:
        out = stop_server(server)
    assert "0 worker restarts" in out
    assert "event-loop lag over" in out and "p99" in out


def test_a_dying_worker_is_replaced_and_the_server_lives_on(numpy_port_copy: Path) -> None:
    env = numpy_port_copy / "env.py"
    env.write_text(
        env.read_text().replace(
            "    def step(self, actions):\n",
            "    def step(self, actions):\n        import os\n\n        os._exit(9)\n",
        )
    )
    address = free_address()
    server = start_server("--port", str(numpy_port_copy), "--address", address, "--workers", "1")
    try:
        with EnvClient(address, timeout=60, token=TOKEN) as client:
            assert client.receive()["backend"] == "numpy"
            states = {"physics": [[0.0, 0.0, 0.01, 0.0]], "elapsed_steps": [0]}
            import numpy as np

            arrays = {k: np.asarray(v) for k, v in states.items()}
            with pytest.raises(PortError, match="exit code 9"):
                client.request(StepBatch(states=arrays, actions=np.asarray([1])))
            # Replaced (twice: the request was re-dispatched once), and still answering.
            assert client.request(Ping())["pid"] > 0
    finally:
        out = stop_server(server)
    assert "2 worker restarts" in out


def test_serve_usage_errors_are_one_line() -> None:
    done = run_envport("serve", str(CARTPOLE), "--port", str(NUMPY_PORT), "--address", "5555")
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "--address" in done.stderr


def test_client_without_server_fails_within_its_timeout() -> None:
    started = time.monotonic()
    with (
        EnvClient(free_address(), timeout=1) as client,
        pytest.raises(PortError, match="no answer"),
    ):
        client.receive()
    # Not a hang: the 1 s timeout ends it (generous: load).
    assert time.monotonic() - started < 30


def test_an_answer_the_wire_refuses_is_the_ports_failure_and_the_worker_lives_on(
    tmp_path: Path,
) -> None:
    from envport.serve.ops import VectorOpen, VectorReset

    from helpers import started_worker

    port = tmp_path / "numpy"
    shutil.copytree(NUMPY_PORT, port)
    env = port / "env.py"
    text = env.read_text()
    old = "        return self.physics.astype(np.float32), {}\n\n    def step"
    assert text.count(old) == 1
    # Observations as Python objects: the wire cannot carry them.
    env.write_text(
        text.replace(
            old,
            old.replace(
                "self.physics.astype(np.float32)",
                "np.array([object()] * self.num_envs, dtype=object)",
            ),
        )
    )
    with started_worker(CARTPOLE, port, "numpy") as worker:
        worker.request(VectorOpen(num_envs=3))
        with pytest.raises(PortError, match="cannot cross the wire"):
            worker.request(VectorReset(seed=1))
        assert worker.request(Ping()) is not None  # the worker still answers


def _raw_answer(address: str, message: bytes) -> Response:
    """What the server answers a hand-made message, sent on a socket of its own."""
    with zmq.Context.instance().socket(zmq.DEALER) as raw:
        raw.setsockopt(zmq.LINGER, 0)
        raw.connect(address)
        raw.send(message)
        assert raw.poll(60_000), "no answer"
        return unpack_response(raw.recv())


def _request(op: str, token: str | None, **args: object) -> bytes:
    fields: dict[str, object] = {"id": 7, "op": op, "args": args}
    if token is not None:
        fields["token"] = token
    return msgpack.packb(fields)


def test_serve_refuses_strangers_malformed_and_oversized_requests_and_serves_on() -> None:
    # No ENVPORT_SERVE_TOKEN: the server makes one and prints it once.
    address = free_address()
    server = start_server(
        "--port", str(NUMPY_PORT), "--address", address, "--workers", "1",
        "--max-request-bytes", "100000", env=user_env(),
    )  # fmt: skip
    assert server.stdout is not None
    token = server.stdout.readline().split()[1]
    assert len(token) >= 32
    try:
        # Anyone who can reach the address: without the token, or with a wrong one, refused.
        for shown in (None, "", "guess-" + token[6:], token + "x"):
            answer = _raw_answer(address, _request("ping", shown))
            assert not answer.ok and answer.result is None, shown
            assert answer.error is not None and "refused" in answer.error
        # Malformed requests, each answered with an error, none a traceback on the server.
        for message, complaint in (
            (_request("cancel", token, id="x"), "`id` must be an integer"),
            (_request("cancel", token), "`id` must be an integer"),
            (_request("ping", token, nonsense=1), "nonsense"),
            (_request("no_such_op", token), "malformed request"),
            (b"\xc1 not msgpack", "malformed request"),
            (msgpack.packb([1, 2, 3]), "malformed request"),
            (msgpack.packb({"id": 7, "op": "ping", "token": 5}), "malformed request"),
        ):
            answer = _raw_answer(address, message)
            assert not answer.ok and answer.error is not None, message
            assert complaint in answer.error, (complaint, answer.error)
        # A request in several frames (a DEALER's multipart message): one error answer.
        with zmq.Context.instance().socket(zmq.DEALER) as frames:
            frames.setsockopt(zmq.LINGER, 0)
            frames.connect(address)
            frames.send_multipart([_request("ping", token), b"more"])
            assert frames.poll(60_000), "no answer"
            answer = unpack_response(frames.recv())
            assert not answer.ok and answer.error is not None
            assert "one frame" in answer.error
        # A message over --max-request-bytes: zmq drops its sender before reading it.
        with zmq.Context.instance().socket(zmq.DEALER) as big:
            big.setsockopt(zmq.LINGER, 0)
            monitor = big.get_monitor_socket(zmq.EVENT_DISCONNECTED)
            big.connect(address)
            big.send(_request("ping", token, padding="x" * 200_000))
            assert monitor.poll(60_000), "the oversized sender was not disconnected"
            assert monitor.recv_multipart()
            assert not big.poll(0)
            big.disable_monitor()
            monitor.close()
        # And the server still serves a client with the token.
        with EnvClient(address, timeout=60, token=token) as client:
            assert client.receive()["backend"] == "numpy"
            assert client.request(Ping())["pid"] > 0
        with (
            EnvClient(address, timeout=60, token="wrong-token-0123456789") as stranger,
            pytest.raises(PortError, match="refused: this server takes requests only"),
        ):
            stranger.receive()
    finally:
        output = stop_server(server)
    assert "Traceback" not in output, output
    assert token not in output  # printed once, at the start, and never again


def test_verify_takes_the_serve_token_from_a_file_not_the_command_line(tmp_path: Path) -> None:
    missing = run_envport(
        "verify", str(CARTPOLE), "--port", str(NUMPY_PORT), "--port-server", free_address(),
        "--port-server-token-file", str(tmp_path / "absent"),
    )  # fmt: skip
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1, missing.stderr
    assert "cannot read the serve token" in missing.stderr
    (tmp_path / "short").write_text("abc\n")
    short = run_envport(
        "verify", str(CARTPOLE), "--port", str(NUMPY_PORT), "--port-server", free_address(),
        "--port-server-token-file", str(tmp_path / "short"),
    )  # fmt: skip
    assert short.returncode == 2 and "at least 16 characters" in short.stderr
    assert "Traceback" not in missing.stderr + short.stderr


def test_a_malformed_answer_from_a_server_is_a_failure_not_a_traceback() -> None:
    # The address a client is given may answer anything: here a ROUTER sending garbage.
    with zmq.Context.instance().socket(zmq.ROUTER) as fake:
        fake.setsockopt(zmq.LINGER, 0)
        port = fake.bind_to_random_port("tcp://127.0.0.1")
        with EnvClient(f"tcp://127.0.0.1:{port}", timeout=60, token=TOKEN) as client:
            identity, _ = fake.recv_multipart()
            fake.send_multipart([identity, b"\xc1 not msgpack"])
            with pytest.raises(PortError, match="sent a malformed answer to `describe`"):
                client.receive()
