"""What a worker can read, and the plain interpreter's check under a worker's limits.

Each test is an attack through `envport verify` as a user runs it: a port reading the
user's cargo credentials, a port printing its environment, and ports that attack only
where they are not watched, inside `l3.plain` (a fork, a file bigger than the scratch, a
look at their surroundings to tell the check from a user's process)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from envport.serve import jail, toolchain

from helpers import CARTPOLE, ROOT, plant_code, user_env

pytestmark = pytest.mark.skipif(not jail.available(), reason="bubblewrap cannot run here")

TOKEN = "cio-fake-publish-token-5150"
# Variables that name no key, token or password, and still hold one.
SECRETS = {
    "DATABASE_URL": "postgres://app:db-secret-8812@db.internal/app",
    "MYSQL_PWD": "mysql-secret-3391",
    "GITHUB_PAT": "ghp_secret4471",
    "SENTRY_DSN": "https://sentry-secret-6620@o1.ingest.sentry.io/2",
    "SMTP_PASSWD": "smtp-secret-1178",
}


def _verify(spec: Path, port: Path, json_out: Path, *args: str, **env: str) -> str:
    command = [sys.executable, "-m", "envport", "verify", str(spec), "--port", str(port)]
    # The static review would refuse these ports' reads of their surroundings before they
    # ran; what is tested here is what the sandbox alone lets them see and do.
    command += ["--json", str(json_out), "--no-static-review", *args]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=300, cwd=ROOT, env=user_env(**env)
    )
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert "Traceback" not in output, output
    return output + json_out.read_text()


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    destination = tmp_path / "cartpole"
    shutil.copytree(CARTPOLE, destination, ignore=shutil.ignore_patterns("__pycache__"))
    return destination


def test_a_port_cannot_read_the_users_cargo_home(spec: Path, tmp_path: Path) -> None:
    cargo_home = tmp_path / "cargo-home"
    cargo_home.mkdir()
    (cargo_home / "credentials.toml").write_text(f'[registry]\ntoken = "{TOKEN}"\n')
    (cargo_home / "config.toml").write_text(f'[http]\nproxy = "{TOKEN}@proxy"\n')
    # What it tries: the user's cargo home, found by name, and the Rust toolchain.
    targets = [str(cargo_home / "credentials.toml"), str(cargo_home / "config.toml")]
    # A toolchain under /usr (Debian's rustc-web, found on a bare PATH) is part of the
    # system every worker runs on; one elsewhere (rustup's) is a Rust build's alone.
    own = [r for r in toolchain.rust().roots if r != "/usr" and not r.startswith("/usr/")]
    targets += [str(cargo_home), *own]
    attack = (
        "import os as _os\n"
        "_seen = []\n"
        f"for _t in {targets!r}:\n"
        "    try:\n"
        "        _seen.append(sorted(_os.listdir(_t)) if _os.path.isdir(_t) else open(_t).read())\n"
        "    except OSError:\n"
        "        pass\n"
        "raise RuntimeError(f'seen: {_seen}')\n"
    )
    port = plant_code(spec / "ports" / "numpy", attack)
    output = _verify(spec, port, tmp_path / "report.json", CARGO_HOME=str(cargo_home))
    assert "seen: []" in output, output
    assert TOKEN not in output


def test_a_port_printing_its_environment_shows_no_secret(spec: Path, tmp_path: Path) -> None:
    attack = "import os as _os\nraise RuntimeError(f'environment: {dict(_os.environ)}')\n"
    port = plant_code(spec / "ports" / "numpy", attack)
    output = _verify(spec, port, tmp_path / "report.json", **SECRETS)
    assert "environment: {" in output, output
    for name, value in SECRETS.items():
        assert name not in output and value not in output, name


def test_a_build_worker_sees_the_compiler_and_not_cargos_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a Rust build worker is given to read (its build itself: tests/test_rust_port.py)."""
    cargo_home = tmp_path / "cargo-home"
    (cargo_home / "registry").mkdir(parents=True)
    (cargo_home / "credentials.toml").write_text(f'token = "{TOKEN}"\n')
    monkeypatch.setenv("CARGO_HOME", str(cargo_home))
    seen, _ = jail.mounts(tmp_path / "scratch", rust=True)
    assert not any(path.startswith(str(cargo_home)) for path in seen), seen
    assert all(root in seen for root in toolchain.rust().roots), seen
    # A NumPy or JAX worker builds nothing: it sees no toolchain at all.
    python_only, _ = jail.mounts(tmp_path / "scratch")
    assert not any(root in python_only for root in toolchain.rust().roots if root != "/usr")


# Right beside the harness; in any other process it attacks with `ATTACK`, then reports
# what came of it as its error (the plain check's failure names it).
UNWATCHED = """

import sys as _sys

if not any(_name.startswith("envport.") for _name in _sys.modules):
    ATTACK
"""

FORK = """import os
    try:
        if os.fork() == 0:
            os._exit(0)
    except OSError as error:
        raise RuntimeError(f"fork refused: {error}") from None
"""

# 1.5 GiB in the working directory, as a port once wrote to the host's disk (reserved in
# one call rather than written: the same blocks taken, without a second of copying).
BIG_FILE = """import os
    try:
        with open("big.bin", "wb") as out:
            os.posix_fallocate(out.fileno(), 0, 3 << 29)
    except OSError as error:
        raise RuntimeError(f"write refused: {error}") from None
"""


@pytest.mark.parametrize(
    ("attack", "refusal"),
    [(FORK, "fork refused: [Errno 1] Operation not permitted"), (BIG_FILE, "[Errno 28]")],
    ids=["fork", "big_file"],
)
def test_the_plain_check_has_a_workers_limits(
    attack: str, refusal: str, spec: Path, tmp_path: Path
) -> None:
    port = spec / "ports" / "numpy"
    physics = port / "physics.py"
    physics.write_text(physics.read_text() + UNWATCHED.replace("ATTACK", attack.rstrip()))
    args = ("--levels", "l3", "--episodes", "5", "--explore-steps", "0")
    output = _verify(spec, port, tmp_path / "report.json", *args)
    # Beside the harness it passes; in the plain interpreter it is refused, and says so.
    assert "pass l3.free" in output, output
    assert "FAIL l3.plain" in output and refusal in output, output
    # (No space left: the sized tmpfs filled, not the host's disk, which has room.)


# Right only when something around it says it is being checked: its arguments, its working
# directory and what is in it, its environment's names and folders.
TELLS = """

import os as _os
import sys as _sys

_own_dynamics = dynamics
_around = [*_sys.argv, _os.getcwd(), *_os.listdir("."), *_os.environ]
_around += [_os.environ.get(_name, "") for _name in ("HOME", "TMPDIR")]
_checked = any("envport" in _part or "steps" in _part for _part in _around)


def dynamics(physics, actions):
    out = _own_dynamics(physics, actions)
    if not _checked:
        out[:, 1] += 0.05
    return out
"""


def test_a_port_cannot_tell_the_plain_check_by_its_surroundings(spec: Path, tmp_path: Path) -> None:
    port = spec / "ports" / "numpy"
    physics = port / "physics.py"
    physics.write_text(physics.read_text() + TELLS)
    args = ("--levels", "l3", "--episodes", "5", "--explore-steps", "0")
    output = _verify(spec, port, tmp_path / "report.json", *args)
    # Beside the harness it sees envport everywhere and is right; in the plain check it
    # sees a user's surroundings and shows what it does there.
    assert "pass l3.free" in output, output
    assert "FAIL l3.plain" in output, output
    assert "obs.x_dot" in output, output
    assert json.loads((tmp_path / "report.json").read_text())["passed"] is False


GRAVITY_BRIDGE = """
import os

import gymnasium


def make():
    # A reference that reads its setting from the user's environment (as MuJoCo's renderer
    # reads MUJOCO_GL): 9.8 only where the variable reaches it.
    env = gymnasium.make("CartPole-v1")
    env.unwrapped.gravity = float(os.environ.get("CARTPOLE_TEST_GRAVITY", "1.0"))
    return env
"""


def test_every_lane_s_reference_sees_the_users_environment(
    spec: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """L3's second lane plays the reference in a worker: the user's trusted code, which the
    verifier's own process runs with the user's environment. A reference worker given only a
    port's allowlist played another CartPole there (its gravity unset), and the known-good
    port diverged on that lane's episodes alone; a secret's name still stays out."""
    (spec / "harness").mkdir()
    (spec / "harness" / "gravity.py").write_text(GRAVITY_BRIDGE)
    toml = spec / "envport.toml"
    toml.write_text(
        toml.read_text().replace(
            'entry = "gymnasium:CartPole-v1"', 'entry = "harness/gravity.py:make"'
        )
    )
    command = [sys.executable, "-m", "envport", "verify", str(spec)]
    command += ["--port", str(spec / "ports" / "numpy"), "--levels", "l3", "--workers", "2"]
    command += ["--episodes", "8", "--steps", "60", "--explore-steps", "0"]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=300, cwd=ROOT,
        env=user_env(CARTPOLE_TEST_GRAVITY="9.8"),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    from envport.serve.worker_env import reference_environment

    monkeypatch.setenv("SOME_SERVICE_TOKEN", "not-for-a-worker")
    monkeypatch.setenv("MUJOCO_GL", "egl")
    seen = reference_environment("/envport-work")
    assert seen["MUJOCO_GL"] == "egl" and "SOME_SERVICE_TOKEN" not in seen
    assert seen["HOME"] == "/envport-work"
