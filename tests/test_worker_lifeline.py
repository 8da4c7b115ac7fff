"""A worker outlives no driver: it holds the read end of a pipe the driver never writes to,
and exits when that ends.

bwrap's --die-with-parent is armed only after bwrap's own fork, so a driver killed in that
moment (seen under load: a `verify` of an unknown env id exiting 2 while the worker was
still starting) left a sandboxed worker idle under init, holding its memory. The kernel
closes the driver's end of the pipe however the driver dies; closing it by hand here is
that death without the race.
"""

from __future__ import annotations

import subprocess

from envport.serve.client import PortWorker
from envport.spec import load_spec
from envport.targets.registry import load_request

from helpers import CARTPOLE


def test_a_worker_exits_when_its_drivers_end_of_the_lifeline_closes() -> None:
    load = load_request(load_spec(CARTPOLE), CARTPOLE / "ports" / "numpy", "numpy")
    worker = PortWorker(timeout=300, load=load)
    try:
        worker.receive()  # up and answering: the port is loaded
        assert worker.process.stdin is not None, "the worker was started without a lifeline"
        worker.process.stdin.close()
        # Generous: only an exit at all is asserted, not how fast (a loaded machine).
        returncode = worker.process.wait(timeout=120)
    except subprocess.TimeoutExpired:
        returncode = None
    finally:
        worker.kill()
        worker.close()
    assert returncode == 3, f"the worker lived on after its driver's end closed: {returncode}"


def test_a_closed_worker_leaves_no_open_lifeline() -> None:
    load = load_request(load_spec(CARTPOLE), CARTPOLE / "ports" / "numpy", "numpy")
    worker = PortWorker(timeout=300, load=load)
    worker.receive()
    worker.close()
    assert worker.process.poll() is not None
    assert worker.process.stdin is not None and worker.process.stdin.closed
