"""The Rust compiler a port is built by: one minimum, stated once (envport.serve.toolchain),
read by `./dev` to choose what it installs; a compiler older than it refused in one line
before any build; the version that will build a crate stated in the Rust prompt."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from envport.pipeline.prompting import prompt_builder
from envport.runs.state import RunState
from envport.serve import toolchain
from envport.spec import load_spec

from helpers import CARTPOLE, ROOT, user_env


def _fake_rustc(folder: Path, version: str) -> dict[str, str]:
    """An environment whose first rustc on PATH says it is `version` (Debian 12's is 1.63)."""
    folder.mkdir()
    rustc = folder / "rustc"
    rustc.write_text(f'#!/bin/sh\necho "rustc {version} (4b91a6ea7 2022-08-08)"\n')
    rustc.chmod(0o755)
    shell = user_env()
    return {**shell, "PATH": f"{folder}{os.pathsep}{shell['PATH']}"}


def test_verify_refuses_a_rust_older_than_the_minimum_in_one_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "envport", "verify", str(CARTPOLE), "--port",
         str(CARTPOLE / "ports" / "rust"), "--target", "rust"],
        env=_fake_rustc(tmp_path / "bin", "1.63.0"),
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "rustc 1.63.0" in lines[0] and f"Rust {toolchain.MINIMUM_RUST}" in lines[0]
    assert "cargo-web" in lines[0] and "rustup" in lines[0]
    assert "Traceback" not in done.stderr


def test_dev_reads_the_minimum_envport_states() -> None:
    # `./dev` chooses the compiler it installs by this minimum, read from the one line.
    script = (
        f'here={ROOT}; eval "$(sed -n "/^rust_minimum()/,/^}}/p" {ROOT / "dev"})"; rust_minimum'
    )
    done = subprocess.run(
        ["bash", "-c", script], capture_output=True, text=True, check=True, env=user_env()
    )
    assert done.stdout.strip() == toolchain.MINIMUM_RUST


@pytest.mark.skipif(shutil.which("rustc") is None, reason="rustc is not installed")
def test_the_rust_prompt_states_the_compiler_that_builds_the_crate() -> None:
    version = subprocess.run(
        ["rustc", "--version"], capture_output=True, text=True, check=True, env=user_env()
    ).stdout.split()[1]
    spec = load_spec(CARTPOLE)
    state = RunState(
        run_id="r",
        spec_source="s",
        spec_name=spec.name,
        target="rust",
        model="replay:x",
        modules=spec.target("rust").modules,
        entry=spec.target("rust").entry,
    )
    context = prompt_builder(spec, "rust", None).context(state)
    assert f"built by rustc {version} " in context
