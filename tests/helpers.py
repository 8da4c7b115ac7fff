"""Shared paths and helpers for the test suite (tests/ is on sys.path under pytest)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

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
