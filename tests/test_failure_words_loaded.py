"""A raising port's words on a loaded machine: the driver can be descheduled between sending
a request and its next line, or read an answer sent ahead only after the worker has failed
the next request too. Either way the failure's end line is already read when the driver
looks for it; it was once looked for past it, for 30 s a failure (a raising port's verify
took minutes, nearly all of it waiting)."""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from envport.errors import PortRaised
from envport.serve.client import PortWorker
from envport.spec import load_spec
from envport.targets.registry import load_request

from helpers import CARTPOLE, NUMPY_PORT, cartpole_batch, plant_code

# A batch of 3 prints, then raises; a batch of 7 prints and steps.
FAIL_ON_THREE = (
    "if self.num_envs == 3:\n"
    "    print('about to fail', flush=True)\n"
    "    raise ValueError('three envs')\n"
    "if self.num_envs == 7:\n"
    "    print('warming up', flush=True)"
)


def _worker(tmp_path: Path) -> PortWorker:
    port = tmp_path / "numpy"
    shutil.copytree(NUMPY_PORT, port, ignore=shutil.ignore_patterns("__pycache__"))
    plant_code(port, FAIL_ON_THREE, "step")
    worker = PortWorker(timeout=300, load=load_request(load_spec(CARTPOLE), port, "numpy"))
    worker.receive(timeout=300)
    return worker


def _until_failed_request_is_read(worker: PortWorker, request_id: int) -> None:
    """What a descheduled driver sees on waking: the worker has failed request `request_id`
    and the output's reader has its end line."""
    end = f"[envport: request {request_id} failed above]"
    while end not in worker._output.since(0):
        time.sleep(0.01)


class _DescheduledAfterSend:
    """The worker's socket, with a driver that sleeps right after sending request
    `failing` until the worker has failed it (the scheduler's doing on a loaded machine)."""

    def __init__(self, worker: PortWorker, failing: int) -> None:
        self._worker, self._socket, self._failing = worker, worker._socket, failing

    def send(self, message: Any, *args: Any, **kwargs: Any) -> None:
        self._socket.send(message, *args, **kwargs)
        if self._worker._next_id == self._failing:
            _until_failed_request_is_read(self._worker, self._failing)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._socket, name)


def test_words_of_a_failure_answered_before_the_driver_takes_its_mark(tmp_path: Path) -> None:
    with _worker(tmp_path) as worker:
        socket = _DescheduledAfterSend(worker, failing=worker._next_id + 1)
        worker._socket = socket  # type: ignore[assignment]
        with pytest.raises(PortRaised) as raised:
            worker.request(cartpole_batch(3))
    assert "ValueError: three envs" in str(raised.value)
    assert "about to fail" in raised.value.detail, raised.value.detail


def test_words_of_a_failure_after_a_request_sent_ahead(tmp_path: Path) -> None:
    # The answer to the request sent ahead moves the mark past what it printed; here the
    # failure after it is already out by then, and is looked for from its own send.
    with _worker(tmp_path) as worker:
        worker.send(cartpole_batch(7))
        worker.send(cartpole_batch(3))
        _until_failed_request_is_read(worker, worker._next_id)
        with pytest.raises(PortRaised) as raised:
            worker.receive()
    assert "about to fail" in raised.value.detail, raised.value.detail
