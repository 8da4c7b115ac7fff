"""The worker's boundary built from what the driver knows (issue 27): what it can see comes
from the driver's own installation and the fields it set, never from text a model wrote."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from envport.errors import PortError
from envport.serve import jail
from envport.serve.client import PortWorker
from envport.serve.ops import LoadReference
from envport.serve.sandbox import Limits
from envport.spec import load_spec
from envport.targets.registry import load_request

from helpers import CARTPOLE, ROOT, user_env

pytestmark = pytest.mark.skipif(not jail.available(), reason="bubblewrap cannot run here")

SECRET = "sk-isolation-planted-7731"
# These ports read the process, start processes or look for envport's modules: the static
# review refuses each before it runs (tests/test_static_review.py). Past it, each layer
# below must still hold on its own.
BEYOND_REVIEW = ["--no-static-review"]


def _leak_probe(targets: list[str]) -> str:
    """Port code that, at import, reads every target it can and fails naming what it read."""
    return (
        "\n\nimport os as _os\n"
        f"_read = []\nfor _t in {targets!r}:\n"
        "    try:\n"
        "        if _os.path.isdir(_t):\n"
        "            _read.append((_t, sorted(_os.listdir(_t))))\n"
        "        else:\n"
        "            _read.append((_t, open(_t).read()))\n"
        "    except OSError:\n"
        "        pass\n"
        "raise RuntimeError(f'seen: {_read}')\n"
    )


def test_paths_planted_in_model_written_fields_are_never_mounted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The user's working directory holds a key; the driver runs from it.
    user_dir = tmp_path / "project"
    user_dir.mkdir()
    (user_dir / ".env").write_text(f"OPENAI_API_KEY={SECRET}\n")
    monkeypatch.chdir(user_dir)
    planted = [str(user_dir), str(user_dir / ".env"), "/proc/self/cwd", "/proc/self/cwd/.env"]
    planted += ["/etc/shadow", "/etc/sudoers", str(Path.home() / ".bash_history")]
    # A spec whose model-written text (description, a module's contract) names those paths.
    spec_dir = tmp_path / "cartpole"
    shutil.copytree(CARTPOLE, spec_dir, ignore=shutil.ignore_patterns("__pycache__"))
    spec_file = spec_dir / "envport.toml"
    text = spec_file.read_text().replace(
        'description = "', f"description = {json.dumps(' '.join(planted))[:-1]} "
    )
    spec_file.write_text(text)
    port = spec_dir / "ports" / "numpy"
    (port / "env.py").write_text((port / "env.py").read_text() + _leak_probe(planted))
    load = load_request(load_spec(spec_file), port, "numpy")
    # ...and a plan's contract text, and names in the module list (what a model plans).
    modules = [
        {**m, "contract": {e: f"reads {p}" for e, p in zip(m["exports"], planted, strict=False)}}
        for m in load.modules
    ]
    modules.append({"name": "/proc/self/cwd", "exports": planted, "contract": {}})
    load = dataclasses.replace(load, modules=modules)
    # The command line mounts none of them.
    line = jail.command_line(["true"], tmp_path / "scratch", readable=[port])
    for path in (str(user_dir), "/etc/shadow", "/root"):
        assert path not in line
    assert "/etc" not in [line[i + 1] for i, a in enumerate(line) if a == "--ro-bind"]
    with PortWorker(timeout=120, load=load) as worker, pytest.raises(PortError) as failed:
        worker.receive()
    message = str(failed.value)
    assert "seen: [" in message, message
    assert SECRET not in message
    for path in planted:
        if path == "/proc/self/cwd":
            continue  # the worker's own working directory: its scratch
        assert f"('{path}'," not in message, message
    # A reference worker given the same spec sees the spec's folder, and still nothing else.
    with PortWorker(timeout=120, load=LoadReference(spec=str(spec_file))) as worker:
        assert "sandbox" in worker.receive()


def _in_jail(tmp_path: Path, code: str, work_bytes: int | None = None) -> str:
    script = tmp_path / "inside.py"
    script.write_text(code)
    command = jail.command_line(
        [sys.executable, str(script)], tmp_path / "scratch", [script], work_bytes=work_bytes
    )
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, env=user_env())
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_worker_is_nobody_in_a_user_namespace_of_its_own(tmp_path: Path) -> None:
    seen = _in_jail(
        tmp_path,
        "import os\n"
        "print(os.getuid(), os.getgid())\n"
        "print(open('/proc/self/uid_map').read().split())\n"
        "caps = [l for l in open('/proc/self/status') if l.startswith('CapEff')]\n"
        "print(caps[0].split()[1])\n"
        "import ctypes\n"
        "nested = ctypes.CDLL(None).unshare(0x10000000) == 0\n"
        "print('nested' if nested else 'no nested namespace')\n",
    ).splitlines()
    assert seen[0] == f"{jail.SANDBOX_ID} {jail.SANDBOX_ID}"
    # One uid mapped, from inside: a namespace of its own (whatever the driver runs as).
    assert seen[1].startswith(f"['{jail.SANDBOX_ID}',") and seen[1].endswith("'1']")
    assert int(seen[2], 16) == 0  # no capability
    assert seen[3] == "no nested namespace"


def test_a_worker_fills_no_more_than_its_scratch_size(tmp_path: Path) -> None:
    """Its working tmpfs is full at the limit; the system root, /dev and the other tmpfs
    take nothing."""
    seen = _in_jail(
        tmp_path,
        "import os\n"
        "def fill(path, mib):\n"
        "    try:\n"
        "        with open(path, 'wb') as f:\n"
        "            for _ in range(mib):\n"
        "                f.write(b'x' * (1 << 20))\n"
        "        return 'wrote'\n"
        "    except OSError as error:\n"
        "        return type(error).__name__ + ' ' + str(error.errno)\n"
        "print(os.getcwd(), os.environ['TMPDIR'])\n"
        "print(fill('big', 64))\n"
        "print(fill('/dev/shm/big', 64))\n"
        "print(fill('/tmp/big', 64))\n"
        "print(fill('/planted', 1))\n"
        "print(fill('/dev/planted', 1))\n",
        work_bytes=16 << 20,
    ).splitlines()
    assert seen[0] == f"{jail.WORK} {jail.WORK}"
    assert seen[1] == "OSError 28"  # ENOSPC at 16 MiB
    assert seen[2] == "OSError 28" and seen[3] == "OSError 28"  # 1 MiB tmpfs
    assert seen[4] == "OSError 30" and seen[5] == "OSError 30"  # read-only


FILLER = """

import os as _os

with open(_os.path.join(_os.getcwd(), "fill"), "wb") as _f:
    for _ in range(64):
        _f.write(b"x" * (1 << 20))
"""


def test_a_port_over_its_scratch_size_is_a_clean_failed_check(tmp_path: Path) -> None:
    spec = tmp_path / "cartpole"
    shutil.copytree(CARTPOLE, spec, ignore=shutil.ignore_patterns("__pycache__"))
    port = spec / "ports" / "numpy"
    (port / "env.py").write_text((port / "env.py").read_text() + FILLER)
    load = load_request(load_spec(spec), port, "numpy")
    limits = Limits(scratch_bytes=16 << 20)
    with PortWorker(timeout=60, load=load, limits=limits) as worker, pytest.raises(PortError) as e:
        worker.receive()
    assert "port failed in `load`: OSError: [Errno 28] No space left on device" in str(e.value)


SPAWNER = """
    match std::process::Command::new("/usr/bin/true").status() {
        Ok(_) => {}
        Err(error) => {
            eprintln!("spawn refused: {error}");
            std::process::abort();
        }
    }
"""


@pytest.mark.skipif(shutil.which("cargo") is None, reason="cargo is not installed")
def test_a_port_starting_a_process_natively_is_a_clean_failed_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Rust port's std::process::Command is native code the audit hook never sees: the
    worker's seccomp filter refuses the process."""
    monkeypatch.setenv("ENVPORT_CACHE_DIR", str(tmp_path / "cache"))
    spec = tmp_path / "cartpole"
    shutil.copytree(CARTPOLE, spec, ignore=shutil.ignore_patterns("__pycache__", "target"))
    lib = spec / "ports" / "rust" / "src" / "lib.rs"
    text = lib.read_text()
    marker = "    if n == 0 {\n        return 0;\n    }\n    let task = Task {"
    assert marker in text
    lib.write_text(text.replace(marker, SPAWNER + marker, 1))
    command = [sys.executable, "-m", "envport", "verify", str(spec), *BEYOND_REVIEW]
    command += ["--port", str(spec / "ports" / "rust"), "--levels", "l3", "--episodes", "3"]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=300, cwd=ROOT, env=user_env()
    )
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert "Traceback" not in output
    assert "spawn refused: Operation not permitted" in output, output


# A wrong dynamics (x_dot off by 0.05) that answers with the reference's next state when it
# finds one in a caller's frame.
FRAME_READER = """

import sys as _sys

_own_dynamics = dynamics


def dynamics(physics, actions):
    frame = _sys._getframe(1)
    while frame is not None:
        seen = frame.f_locals.get("after")
        if isinstance(seen, dict) and "physics" in seen:
            return np.asarray(seen["physics"], dtype=np.float64)[None, :]
        frame = frame.f_back
    out = _own_dynamics(physics, actions)
    out[:, 1] += 0.05
    return out
"""


def test_an_l1_probe_hands_the_port_no_expected_state(tmp_path: Path) -> None:
    spec = tmp_path / "cartpole"
    shutil.copytree(CARTPOLE, spec, ignore=shutil.ignore_patterns("__pycache__"))
    physics = spec / "ports" / "numpy" / "physics.py"
    physics.write_text(physics.read_text() + FRAME_READER)
    command = [sys.executable, "-m", "envport", "verify", str(spec), *BEYOND_REVIEW]
    command += ["--port", str(spec / "ports" / "numpy"), "--levels", "l1"]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=300, cwd=ROOT, env=user_env()
    )
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    # The probe of the module function itself catches it (it found no `after` to copy).
    assert "FAIL l1.physics.dynamics" in output, output
    assert "pass l1.physics.dynamics" not in output


# Right only when it sees envport's modules loaded beside it: x_dot off by 0.05 otherwise.
WATCHED = """

import sys as _sys

_own_dynamics = dynamics


def dynamics(physics, actions):
    out = _own_dynamics(physics, actions)
    if not any(name.startswith("envport.") for name in _sys.modules):
        out[:, 1] += 0.05
    return out
"""


# The JAX port's physics, right only when envport's modules are loaded (decided at trace time).
WATCHED_JAX = """

import sys as _sys

_own_dynamics = dynamics


def dynamics(x, x_dot, theta, theta_dot, action, params):
    out = _own_dynamics(x, x_dot, theta, theta_dot, action, params)
    if not any(name.startswith("envport.") for name in _sys.modules):
        return (out[0], out[1] + 0.05, *out[2:])
    return out
"""


@pytest.mark.parametrize(("target", "payload"), [("numpy", WATCHED), ("jax", WATCHED_JAX)])
def test_a_port_right_only_while_watched_fails_the_plain_interpreter_check(
    target: str, payload: str, tmp_path: Path
) -> None:
    spec = tmp_path / "cartpole"
    shutil.copytree(CARTPOLE, spec, ignore=shutil.ignore_patterns("__pycache__"))
    physics = spec / "ports" / target / "physics.py"
    physics.write_text(physics.read_text() + payload)
    command = [sys.executable, "-m", "envport", "verify", str(spec), *BEYOND_REVIEW]
    command += ["--port", str(spec / "ports" / target), "--levels", "l3", "--episodes", "5"]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=300, cwd=ROOT, env=user_env()
    )
    output = done.stdout + done.stderr
    # Beside the harness it passes every rollout; imported as a user would, it is wrong.
    assert "pass l3.free" in output and "pass l3.resync" in output, output
    assert "FAIL l3.plain" in output, output
    assert "plain interpreter (no envport module) differs from the reference" in output
    assert "obs.x_dot" in output
    assert done.returncode == 1, output


# A port that imports fine beside the harness and hangs when imported alone.
HANGS_ALONE = """

import sys as _sys
import time as _time

if not any(name.startswith("envport.") for name in _sys.modules):
    _time.sleep(600)
"""


def test_a_plain_interpreter_that_hangs_is_ended_and_reported(tmp_path: Path) -> None:
    # The plain interpreter starts before the levels and is judged last: one that never
    # answers fails the check within the timeout and is ended with the run, not left behind.
    spec = tmp_path / "cartpole"
    shutil.copytree(CARTPOLE, spec, ignore=shutil.ignore_patterns("__pycache__"))
    physics = spec / "ports" / "numpy" / "physics.py"
    physics.write_text(physics.read_text() + HANGS_ALONE)
    command = [sys.executable, "-m", "envport", "verify", str(spec), *BEYOND_REVIEW]
    command += ["--timeout", "10"]
    command += ["--port", str(spec / "ports" / "numpy"), "--levels", "l3", "--episodes", "5"]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=300, cwd=ROOT, env=user_env()
    )
    output = done.stdout + done.stderr
    assert "pass l3.free" in output, output
    assert "FAIL l3.plain" in output, output
    assert "the plain interpreter did not finish within 10 s" in output, output
    assert done.returncode == 1, output
    left = subprocess.run(
        ["ps", "-eo", "args"], capture_output=True, text=True, check=True, env=user_env()
    )
    assert [line for line in left.stdout.splitlines() if str(spec) in line] == []
