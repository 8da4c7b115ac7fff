"""Specs inferred by the real `envport init` for the examples' envs, made once per test
session (kept under pytest's base temp directory) and shared by the init test modules."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import ROOT, run_envport

# Fewer episodes and steps than a user's default, so the whole set is a few seconds each.
BUDGET = "30,8000"

# The examples with a known-good NumPy port, and the env each was written for.
EXAMPLES = {
    "cartpole": "CartPole-v1",
    "acrobot": "Acrobot-v1",
    "mountaincar": "MountainCar-v0",
    "pendulum": "Pendulum-v1",
    "frozenlake": "FrozenLake-v1",
    "taxi": "Taxi-v4",
}


def infer(env: str, out: Path) -> Path:
    """The inferred spec for `env` in `out`, made once."""
    if not (out / "envport.toml").is_file():
        result = run_envport("init", env, "--out", str(out), "--budget", BUDGET, "--force")
        assert result.returncode == 0, result.stderr
    return out


def example_spec(name: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return infer(EXAMPLES[name], tmp_path_factory.getbasetemp() / "init-specs" / name)


def numpy_port(name: str) -> Path:
    return ROOT / "examples" / name / "ports" / "numpy"
