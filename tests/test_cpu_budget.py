"""A port worker's CPU seconds per request (the sandbox's RLIMIT_CPU): enough for a request
that uses its whole wall-clock timeout on every core, and named when it runs out."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from envport.errors import PortError
from envport.serve.client import PortWorker
from envport.serve.launch import request_limits
from envport.serve.sandbox import Limits
from envport.spec import load_spec
from envport.targets.registry import load_request

from helpers import CARTPOLE, plant_code


def test_a_long_timeout_brings_cpu_seconds_for_every_core() -> None:
    default = Limits().cpu_seconds_per_request
    assert request_limits(10).cpu_seconds_per_request == default
    cores = os.cpu_count() or 1
    assert request_limits(1800).cpu_seconds_per_request >= 1800 * cores
    assert request_limits(1800).memory_bytes == Limits().memory_bytes


def test_a_request_past_its_cpu_seconds_is_killed_and_says_so(numpy_port_copy: Path) -> None:
    plant_code(numpy_port_copy, "while True:\n    pass\n")  # spins at import: in `load`
    load = load_request(load_spec(CARTPOLE), numpy_port_copy, "numpy")
    worker = PortWorker(timeout=120, load=load, limits=Limits(cpu_seconds_per_request=1))
    with worker, pytest.raises(PortError) as error:
        worker.receive()
    assert "SIGXCPU" in str(error.value), error.value
