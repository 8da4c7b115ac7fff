"""Hostile ports: untrusted code that attacks the harness. Each must end as a failed check
with a clear reason, the verifier must survive, and nothing outside the worker's scratch
directory may change. Payloads live in tests/hostile/ (hand-written attacks)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import CARTPOLE, ROOT

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
}


def plant(payload: Path, port: Path) -> None:
    code = payload.read_text()
    where = code.splitlines()[0].removeprefix("# where: ").strip()
    env = port / "env.py"
    text = env.read_text()
    if where == "import":
        text += "\n\n" + code
    else:
        body = "".join(f"        {line}\n" if line.strip() else "\n" for line in code.splitlines())
        marker = "    def step(self, actions):\n"
        text = text.replace(marker, marker + body)
    env.write_text(text)


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
    assert len(names) >= 12


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_hostile_port_fails_cleanly(name: str, numpy_port_copy: Path, tmp_path: Path) -> None:
    plant(HOSTILE / f"{name}.py", numpy_port_copy)
    home = tmp_path / "home"
    home.mkdir()
    (home / "keep.txt").write_text("precious")
    before_home, before_port = tree_digest(home), tree_digest(numpy_port_copy)
    report = tmp_path / "report.json"
    env = {**os.environ, "HOME": str(home), "OPENAI_API_KEY": SECRET, "PYTHONUNBUFFERED": "1"}
    started = time.monotonic()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "envport",
            "verify",
            str(CARTPOLE),
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
    # Nothing outside the scratch directory changed: not the home, not the port itself.
    assert tree_digest(home) == before_home
    assert tree_digest(numpy_port_copy) == before_port
    assert not (home / "pwned.txt").exists()
    assert json.loads(report.read_text())["passed"] is False
    assert elapsed < 60
