"""A Rust port cannot poison the shared build cache (issue 27): build scripts are refused,
each build has its own directory, and the cache is written by the driver only, after
hashing, and read-only in every worker."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from envport.serve import crate_cache, jail
from envport.targets.crate_policy import refusal
from envport.targets.rust_build import cache_key

from helpers import CARTPOLE, run_envport, user_env

RUST_PORT = CARTPOLE / "ports" / "rust"
pytestmark = [
    pytest.mark.skipif(shutil.which("cargo") is None, reason="cargo is not installed"),
    pytest.mark.skipif(not jail.available(), reason="bubblewrap cannot run here"),
]

# A build script that plants a library, with its digest, under another crate's key.
PLANTER = """
fn main() {
    let dir = std::path::Path::new("ENTRY");
    let _ = std::fs::create_dir_all(dir);
    let _ = std::fs::copy(concat!(env!("CARGO_MANIFEST_DIR"), "/good.so"),
                          dir.join("libenvport_port.so"));
    let _ = std::fs::write(dir.join("sha256"), "DIGEST");
    println!("cargo:warning=planted");
}
"""


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv("ENVPORT_CACHE_DIR", str(root))
    return root / "rust"


def _spec_copy(tmp_path: Path, allow_build_code: bool) -> Path:
    spec = tmp_path / "cartpole"
    shutil.copytree(CARTPOLE, spec, ignore=shutil.ignore_patterns("__pycache__", "target"))
    if allow_build_code:
        toml = spec / "envport.toml"
        toml.write_text(
            toml.read_text().replace(
                '[targets.rust]\nentry = "lib"\n',
                '[targets.rust]\nentry = "lib"\nallow_build_code = true\n',
            )
        )
    return spec


def _verify(spec: Path, port: Path) -> tuple[int, str]:
    done = run_envport("verify", str(spec), "--port", str(port), "--levels", "l3")
    return done.returncode, done.stdout + done.stderr


@pytest.mark.parametrize("allowed", [False, True], ids=["refused", "allowed-but-read-only"])
def test_a_build_script_cannot_plant_a_library_for_another_crate(
    allowed: bool, tmp_path: Path, cache: Path
) -> None:
    spec = _spec_copy(tmp_path, allowed)
    # The known-good crate, built once: the library the attacker will plant.
    code, output = _verify(spec, spec / "ports" / "rust")
    assert code == 0, output
    good = crate_cache.cached(cache, cache_key(spec / "ports" / "rust"))
    assert good is not None
    # The buggy crate (gravity 9.81), whose key the attacker aims at.
    buggy = tmp_path / "buggy" / "rust"
    shutil.copytree(spec / "ports" / "rust", buggy)
    physics = buggy / "src" / "physics.rs"
    physics.write_text(physics.read_text().replace("GRAVITY: f64 = 9.8;", "GRAVITY: f64 = 9.81;"))
    entry = cache / cache_key(buggy)
    # The poisoner: the good crate plus a build script planting the good library there.
    poisoner = tmp_path / "poisoner" / "rust"
    shutil.copytree(spec / "ports" / "rust", poisoner)
    shutil.copyfile(good, poisoner / "good.so")
    digest = hashlib.sha256(good.read_bytes()).hexdigest()
    script = PLANTER.replace("ENTRY", str(entry)).replace("DIGEST", digest)
    (poisoner / "build.rs").write_text(script)
    code, output = _verify(spec, poisoner)
    if not allowed:
        assert code == 1, output
        assert "refused to build the crate: build.rs: build scripts are not allowed" in output
        assert "Traceback" not in output
    assert not entry.exists(), "the build script planted a library in the shared cache"
    # The buggy crate still fails: nothing answers for it but its own code.
    code, output = _verify(spec, buggy)
    assert code == 1, output
    assert "DIVERGED" in output or "FAIL" in output, output


def test_a_worker_cannot_write_the_shared_cache(tmp_path: Path, cache: Path) -> None:
    """The cache is mounted read-only: a write from inside the sandbox fails."""
    cache.mkdir(parents=True)
    attempt = tmp_path / "attempt.py"
    attempt.write_text(
        "import sys\ntry:\n"
        f"    open({str(cache / 'planted')!r}, 'w').write('x')\n"
        "    print('wrote')\nexcept OSError as error:\n    print('refused', error)\n"
    )
    command = jail.command_line(
        [sys.executable, str(attempt)],
        tmp_path / "scratch",
        readable=[cache, attempt],
    )
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, env=user_env())
    assert "refused" in done.stdout, done.stdout + done.stderr
    assert not (cache / "planted").exists()


@pytest.mark.parametrize(
    ("files", "fragment"),
    [
        ({"build.rs": "fn main() {}"}, "build.rs: build scripts are not allowed"),
        ({"Cargo.toml": '[package]\nname = "x"\nbuild = "gen.rs"\n'}, "gen.rs: build scripts"),
        ({"Cargo.toml": '[package]\nname = "x"\n[lib]\nproc-macro = true\n'}, "proc-macro"),
        ({"Cargo.toml": '[package]\nname = "x"\n[dependencies]\nrand = "0.8"\n'}, "`rand`"),
        (
            {"Cargo.toml": '[package]\nname = "x"\n[target.x.build-dependencies]\ncc = "1"\n'},
            "`cc`",
        ),
        ({".cargo/config.toml": "[build]\nrustc-wrapper = '/bin/sh'\n"}, ".cargo:"),
        ({"rust-toolchain.toml": "[toolchain]\npath = '/tmp/x'\n"}, "rust-toolchain.toml:"),
    ],
)
def test_a_crate_that_would_run_code_at_build_time_is_refused(
    files: dict[str, str], fragment: str, tmp_path: Path
) -> None:
    (tmp_path / "Cargo.toml").write_text('[package]\nname = "x"\n')
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    why = refusal(tmp_path, [], False)
    assert why is not None and fragment in why, why
    if "rand" in fragment:
        assert refusal(tmp_path, ["rand"], False) is None
    if fragment.startswith("build.rs"):
        assert refusal(tmp_path, [], True) is None
    assert os.sep not in why.split(":")[0] or why.startswith(".cargo")
