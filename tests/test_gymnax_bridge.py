"""A third-party gymnax env verifies with only a bridge file added (and a wrong one fails)."""

from __future__ import annotations

import json
import shlex
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


@pytest.mark.slow
def test_gymnax_with_wrong_params_is_caught(tmp_path: Path) -> None:
    port = tmp_path / "gymnax"
    shutil.copytree(BRIDGE, port, ignore=shutil.ignore_patterns("__pycache__"))
    _wrong_params(port)
    done = run_envport("verify", str(CARTPOLE), "--port", str(port))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "DIVERGED" in done.stdout


def _wrong_params(port: Path) -> None:
    env = port / "env.py"
    env.write_text(
        env.read_text().replace(
            "return _env.default_params", "return _env.default_params.replace(gravity=9.9)"
        )
    )


@pytest.mark.slow
def test_a_one_file_port_named_after_its_target_is_a_port(tmp_path: Path) -> None:
    """`ports/jax` holding one bridge file: the spec's jax target lists physics and env, but a
    port that exports the contract is a port however it is split."""
    port = tmp_path / "jax"
    shutil.copytree(BRIDGE, port, ignore=shutil.ignore_patterns("__pycache__"))
    done = run_envport(
        "verify", str(CARTPOLE), "--port", str(port), "--target", "jax",
        "--levels", "l1,l3", "--examples", "10", "--episodes", "10",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "note: the port is not split into the modules target `jax` lists" in done.stdout
    assert "pass l1.transition" in done.stdout and "l1.physics" not in done.stdout


@pytest.mark.slow
def test_the_replay_of_a_one_module_port_runs_as_printed(tmp_path: Path) -> None:
    port = tmp_path / "gymnax"
    shutil.copytree(BRIDGE, port, ignore=shutil.ignore_patterns("__pycache__"))
    _wrong_params(port)
    first_json = tmp_path / "first.json"
    done = run_envport(
        "verify", str(CARTPOLE), "--port", str(port), "--levels", "l1", "--examples", "30",
        "--no-shrink", "--json", str(first_json),
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    first = json.loads(first_json.read_text())["levels"][0]["divergences"][0]
    words = shlex.split(first["replay"])
    assert "--module" not in words  # the spec lists no modules for a port of no target
    again_json = tmp_path / "again.json"
    again = run_envport(*words[1:], "--json", str(again_json))
    assert again.returncode == 1, again.stdout + again.stderr
    same = json.loads(again_json.read_text())["levels"][0]["divergences"][0]
    assert (same["start_state"], same["fields"]) == (first["start_state"], first["fields"])
