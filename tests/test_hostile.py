"""Hostile ports: untrusted code that attacks the harness. Each must end as a failed check
with a clear reason, the verifier must survive, and nothing outside the worker's scratch
directory may change. Payloads live in tests/hostile/ (hand-written attacks)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from envport.serve import jail

from helpers import CARTPOLE, ROOT, payload_place, plant_code, user_env

HOSTILE = Path(__file__).parent / "hostile"
SECRET = "sk-hostile-test-SECRET-4242"

# payload -> (exit code, a fragment of the one-line reason)
EXPECTED = {
    "import_loop": (1, "did not answer `load` within 3 s"),
    "step_loop": (1, "did not answer `rollout` within 3 s"),
    "segfault": (1, "port worker died in `rollout`: killed by signal 11"),
    "huge_alloc": (1, "MemoryError"),
    "fork_loop": (1, "os.fork is not allowed in a port"),
    "network": (1, "port failed in `load`"),
    "read_keys": (1, "leaked: {}"),
    "write_outside": (1, "pwned.txt is not allowed"),
    "delete_outside": (1, "os.remove on"),
    "monkeypatch": (1, "DIVERGED"),
    "fake_success": (1, "DIVERGED"),
    "exit_at_import": (1, "SystemExit: 0"),
    "hard_exit_at_import": (1, "port worker died in `load`: exit code 0"),
    "nan": (1, "DIVERGED"),
    "dir_fd_write": (1, "writing env.py is not allowed"),
    "link_target": (1, "outside the scratch directory"),
    "unlink_dir_fd": (1, "os.remove on __init__.py is not allowed"),
    "posixsubprocess": (1, "_posixsubprocess is not allowed"),
    "ctypes_write": (1, "loading libc through ctypes is not allowed"),
    "proc_environ": (1, "environ leaked: []"),
}


def plant(payload: Path, port: Path) -> None:
    code = payload.read_text()
    plant_code(port, code, payload_place(code))


def tree_digest(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        digest.update(str(path.relative_to(root)).encode())
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def test_every_payload_has_an_expectation() -> None:
    names = {p.stem for p in HOSTILE.glob("*.py")}
    assert names == set(EXPECTED)
    assert len(names) >= 20


@pytest.fixture
def spec_copy(tmp_path: Path) -> Path:
    """The CartPole example copied whole, port included: payloads aim at the spec's own
    files (its probes, which the verifier imports), so they must not be the repository's."""
    destination = tmp_path / "cartpole"
    shutil.copytree(CARTPOLE, destination, ignore=shutil.ignore_patterns("__pycache__"))
    return destination


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_hostile_port_fails_cleanly(name: str, spec_copy: Path, tmp_path: Path) -> None:
    numpy_port_copy = spec_copy / "ports" / "numpy"
    plant(HOSTILE / f"{name}.py", numpy_port_copy)
    home = tmp_path / "home"
    home.mkdir()
    (home / "keep.txt").write_text("precious")
    before_home, before_spec = tree_digest(home), tree_digest(spec_copy)
    report = tmp_path / "report.json"
    env = user_env(HOME=str(home), OPENAI_API_KEY=SECRET)
    started = time.monotonic()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "envport",
            "verify",
            str(spec_copy),
            # The static review refuses every payload first; the sandbox must hold alone.
            "--no-static-review",
            "--port",
            str(numpy_port_copy),
            "--levels",
            "l3",
            "--timeout",
            "3",
            "--json",
            str(report),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env=env,
    )
    elapsed = time.monotonic() - started
    code, fragment = EXPECTED[name]
    output = done.stdout + done.stderr
    assert done.returncode == code, output
    assert "Traceback" not in output
    assert fragment in output, output
    # The port's lies and loot never reach the user or the report.
    assert "every level passes" not in done.stdout
    assert SECRET not in output and SECRET not in report.read_text()
    # Nothing outside the scratch directory changed: not the home, not the spec, its probes
    # or the port itself.
    assert tree_digest(home) == before_home
    assert tree_digest(spec_copy) == before_spec
    assert not (home / "pwned.txt").exists()
    assert json.loads(report.read_text())["passed"] is False
    # A hang would have run into the 120 s limit above; no tighter deadline (load).
    assert elapsed < 115


# The attacks that write, delete or start processes, run as plain scripts inside the OS
# sandbox alone (no audit hook): bubblewrap must hold by itself.
OS_LAYER = ["write_outside", "delete_outside", "dir_fd_write", "link_target", "unlink_dir_fd"]
OS_LAYER += ["posixsubprocess", "ctypes_write", "proc_environ", "read_keys"]


@pytest.mark.skipif(not jail.available(), reason="bubblewrap cannot run here")
@pytest.mark.parametrize("name", OS_LAYER)
def test_os_sandbox_holds_without_the_audit_hook(
    name: str, spec_copy: Path, tmp_path: Path
) -> None:
    port = spec_copy / "ports" / "numpy"
    script = port / "attack.py"
    script.write_text((HOSTILE / f"{name}.py").read_text())
    home = tmp_path / "home"
    home.mkdir()
    (home / "keep.txt").write_text("precious")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    before_home, before_spec = tree_digest(home), tree_digest(spec_copy)
    command = jail.command_line([sys.executable, str(script)], scratch, readable=[spec_copy])
    env = user_env(HOME=str(home), OPENAI_API_KEY=SECRET)
    driver_env = {"PATH": os.environ["PATH"], "HOME": str(home), "OPENAI_API_KEY": SECRET}
    # The driver-like parent holds the key in its environment; the attack runs without it.
    worker_env = {k: v for k, v in env.items() if k != "OPENAI_API_KEY"}
    parent = subprocess.Popen(["sleep", "30"], env=driver_env)
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=60, env=worker_env)
    finally:
        parent.kill()
        parent.wait()
    assert SECRET not in done.stdout + done.stderr
    assert tree_digest(home) == before_home, done.stderr
    assert tree_digest(spec_copy) == before_spec, done.stderr
