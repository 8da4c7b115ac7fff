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

import pytest

from envport.errors import PortError
from envport.serve.ops import Ping, StepBatch
from envport.serve.remote import EnvClient

from helpers import CARTPOLE, NUMPY_PORT, ROOT, run_envport, user_env


def free_address() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"tcp://127.0.0.1:{probe.getsockname()[1]}"


def start_server(*args: str) -> subprocess.Popen:
    server = subprocess.Popen(
        [sys.executable, "-m", "envport", "serve", str(CARTPOLE), *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=user_env(),
    )
    assert server.stdout is not None
    assert "serving" in server.stdout.readline()
    return server


def stop_server(server: subprocess.Popen) -> str:
    server.send_signal(signal.SIGTERM)
    out, err = server.communicate(timeout=60)
    assert server.returncode == 0, err
    return out


@pytest.mark.slow
def test_served_port_verifies_and_stops_with_a_lag_summary() -> None:
    address = free_address()
    server = start_server("--port", str(NUMPY_PORT), "--address", address, "--workers", "2")
    try:
        done = run_envport(
            "verify", str(CARTPOLE), "--port", str(NUMPY_PORT), "--port-server", address
        )
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
        with EnvClient(address, timeout=60) as client:
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
    assert time.monotonic() - started < 10


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
