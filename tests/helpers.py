"""Shared paths and helpers for the test suite (tests/ is on sys.path under pytest)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from envport.serve.client import PortWorker

ROOT = Path(__file__).resolve().parent.parent
CARTPOLE = ROOT / "examples" / "cartpole"
JAX_PORT = CARTPOLE / "ports" / "jax"
NUMPY_PORT = CARTPOLE / "ports" / "numpy"


def run_envport(*args: str, timeout: float = 300, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    """Run the real command line in a subprocess, as a user or a CI job would."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.run(
        [sys.executable, "-m", "envport", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env=env,
    )


def started_worker(example: Path, port: Path, target: str) -> PortWorker:
    """A worker hosting `port` (a real subprocess, as `envport verify` starts it), loaded."""
    from envport.spec import load_spec
    from envport.targets.registry import load_request

    worker = PortWorker(timeout=300, load=load_request(load_spec(example), port, target))
    worker.receive()
    return worker
