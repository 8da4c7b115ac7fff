"""Fixtures shared by the test suite."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from helpers import NUMPY_PORT


@pytest.fixture
def numpy_port_copy(tmp_path: Path) -> Path:
    """A writable copy of the known-good NumPy port, for planting faults."""
    destination = tmp_path / "numpy"
    shutil.copytree(NUMPY_PORT, destination, ignore=shutil.ignore_patterns("__pycache__"))
    return destination
