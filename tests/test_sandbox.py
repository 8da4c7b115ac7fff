"""The sandbox's edges that the hostile ports do not reach: frozen harness files that the
driver executes, and a machine without bubblewrap."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from envport.runs import harness
from envport.runs.layout import create_run, new_run_id
from envport.runs.state import RunState
from envport.verifiers.draws.probes import load_probes

from helpers import CARTPOLE, NUMPY_PORT, ROOT, user_env


def _new_run(tmp_path: Path) -> Path:
    state = RunState(
        run_id=new_run_id("cartpole", "numpy"),
        spec_source=str(CARTPOLE / "envport.toml"),
        spec_name="cartpole",
        target="numpy",
        model="replay:/x",
    )
    return create_run(tmp_path / "runs", CARTPOLE / "envport.toml", state).root


def test_a_run_freezes_its_harness_files_read_only_and_hashed(tmp_path: Path) -> None:
    root = _new_run(tmp_path)
    probes = root / "probes" / "numpy.py"
    assert probes.is_file()
    assert probes.stat().st_mode & 0o222 == 0
    assert (root / harness.MANIFEST).is_file()
    assert load_probes(probes)  # unchanged: loads


def test_a_changed_probes_file_is_never_executed(tmp_path: Path) -> None:
    root = _new_run(tmp_path)
    probes = root / "probes" / "numpy.py"
    marker = tmp_path / "planted-code-ran"
    os.chmod(probes, 0o644)
    probes.write_text(probes.read_text() + f"\nopen({str(marker)!r}, 'w').close()\n")
    with pytest.raises(harness.HarnessChanged, match="changed since the run started"):
        load_probes(probes)
    assert not marker.exists()
    stranger = root / "probes" / "extra.py"
    stranger.write_text(f"open({str(marker)!r}, 'w').close()\n")
    with pytest.raises(harness.HarnessChanged, match="not a harness file this run froze"):
        load_probes(stranger)
    assert not marker.exists()


def _path_without_bwrap(tmp_path: Path) -> str:
    """A PATH with what verify needs and no `bwrap`, as on a machine without bubblewrap."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("sh", "true", "uname", "git"):
        found = shutil.which(tool)
        if found:
            (bin_dir / tool).symlink_to(found)
    return str(bin_dir)


def _verify(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    env = user_env(PATH=_path_without_bwrap(tmp_path))
    env.pop("ENVPORT_UNSAFE_NO_SANDBOX", None)
    command = [sys.executable, "-m", "envport", "verify", str(CARTPOLE)]
    command += ["--port", str(NUMPY_PORT), "--levels", "l3", "--episodes", "5", *extra]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, env=env, cwd=ROOT)


def test_without_bubblewrap_generated_code_is_refused_in_one_line(tmp_path: Path) -> None:
    done = _verify(tmp_path)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "bubblewrap" in lines[0] and "--unsafe-no-sandbox" in lines[0]


def test_unsafe_no_sandbox_runs_the_port_and_says_so_once(tmp_path: Path) -> None:
    done = _verify(tmp_path, "--unsafe-no-sandbox")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr.count("WARNING") == 1
    assert "--unsafe-no-sandbox" in done.stderr
