"""A third-party gymnax env verifies with only a bridge file added (and a wrong one fails)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from helpers import CARTPOLE, run_envport

pytest.importorskip("gymnax")
BRIDGE = CARTPOLE / "ports" / "gymnax"


def test_gymnax_cartpole_verifies_through_its_bridge() -> None:
    done = run_envport("verify", str(CARTPOLE), "--port", str(BRIDGE))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "backend jax" in done.stdout
    # The bridge is one small file: the env itself is gymnax's, untouched.
    assert sorted(p.name for p in BRIDGE.glob("*.py")) == ["env.py"]


def test_gymnax_with_wrong_params_is_caught(tmp_path: Path) -> None:
    port = tmp_path / "gymnax"
    shutil.copytree(BRIDGE, port, ignore=shutil.ignore_patterns("__pycache__"))
    env = port / "env.py"
    env.write_text(
        env.read_text().replace(
            "return _env.default_params", "return _env.default_params.replace(gravity=9.9)"
        )
    )
    done = run_envport("verify", str(CARTPOLE), "--port", str(port))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "DIVERGED" in done.stdout
