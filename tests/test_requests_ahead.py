"""A request sent ahead and never waited for (a JAX port's warm-up) is the worker's work of
its own: the next request's timeout starts when it is answered, and a worker that dies or
hangs in it is reported in its name, not in the name of the request after it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from envport.errors import PortError
from envport.serve.client import PortWorker
from envport.spec import load_spec
from envport.targets.registry import load_request

from helpers import CARTPOLE, NUMPY_PORT, cartpole_batch, plant_code


def _worker(tmp_path: Path, seconds: float, timeout: float) -> PortWorker:
    """A CartPole port that takes `seconds` to step a batch of 7 envs or of 5 (any other
    size at once), in a worker whose requests time out after `timeout` s."""
    port = tmp_path / "numpy"
    shutil.copytree(NUMPY_PORT, port, ignore=shutil.ignore_patterns("__pycache__"))
    slow = f"if self.num_envs in (5, 7):\n    import time\n    time.sleep({seconds})"
    plant_code(port, slow, "step")
    worker = PortWorker(timeout=timeout, load=load_request(load_spec(CARTPOLE), port, "numpy"))
    worker.receive(timeout=300)
    return worker


@pytest.mark.slow  # two requests of 8 s each
def test_the_next_requests_timeout_starts_when_the_one_sent_ahead_is_answered(
    tmp_path: Path,
) -> None:
    # Each request takes 8 s, within the 12 s timeout (4 s to spare for a loaded machine's
    # step). Charged from its own send, the second waited 16 s: it timed out and the
    # worker was stopped.
    with _worker(tmp_path, seconds=8, timeout=12) as worker:
        worker.send(cartpole_batch(7))
        answer = worker.request(cartpole_batch(5))
    assert answer["obs"].shape[0] == 5


def test_a_worker_stuck_in_a_request_sent_ahead_is_reported_in_its_name(
    tmp_path: Path,
) -> None:
    with _worker(tmp_path, seconds=600, timeout=2) as worker:
        worker.send(cartpole_batch(7))
        with pytest.raises(PortError) as error:
            worker.request(cartpole_batch(1))
    assert "did not answer `step_batch` (sent ahead of `step_batch`) within 2 s" in str(error.value)
