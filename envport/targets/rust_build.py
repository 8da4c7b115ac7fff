"""Build a Rust port (a cdylib crate) with cargo, inside a worker process only.

The crate is copied to a scratch directory and built there, so the port directory gets no
`target/` or `Cargo.lock` (a port under review stays exactly what was generated). The built
library is cached under a key made of the crate's files and the compiler's version: a
repeated verify of unchanged code loads it again without building.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from envport.cache_home import cache_home
from envport.targets.loader import ContractError

# Seconds for one `cargo build`; the verifier's own per-request timeout must be longer.
BUILD_TIMEOUT = 100.0
# Compiler messages kept in the one-line error a repair prompt starts from.
KEEP_ERRORS = 3
_IGNORED = ("target", ".git", "__pycache__")
_SUFFIX = {"darwin": ".dylib", "win32": ".dll"}.get(sys.platform, ".so")


class BuildError(Exception):
    """The crate did not compile; the message is cargo's, cut to one line."""


def cache_root() -> Path:
    return cache_home() / "rust"


def _crate_files(crate: Path) -> list[Path]:
    files = []
    for path in sorted(crate.rglob("*")):
        parts = path.relative_to(crate).parts
        if path.is_file() and not any(p in _IGNORED or p.startswith(".") for p in parts):
            files.append(path)
    return files


def _compiler_version() -> str:
    try:
        done = subprocess.run(
            ["rustc", "-vV"], capture_output=True, text=True, timeout=30, check=True
        )
    except FileNotFoundError:
        raise ContractError("rustc is not installed: a Rust port needs cargo and rustc") from None
    except (subprocess.SubprocessError, OSError) as error:
        raise ContractError(f"rustc -vV failed: {error}") from None
    return done.stdout


def source_key(crate: Path) -> str:
    """Hash of every file of the crate (path and content) and of the compiler version."""
    digest = hashlib.sha256(_compiler_version().encode())
    for path in _crate_files(crate):
        digest.update(str(path.relative_to(crate)).encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:24]


def first_errors(output: str) -> str:
    """The compiler's first error lines (cargo's short format), joined into one line."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    errors = [line for line in lines if ": error" in line or line.startswith("error")]
    # cargo's closing "could not compile" line says nothing a repair can use.
    specific = [line for line in errors if "could not compile" not in line] or errors
    picked = specific[:KEEP_ERRORS] or lines[-KEEP_ERRORS:]
    more = len(specific) - len(picked)
    return "; ".join(picked) + (f"; and {more} more" if more > 0 else "")


def _run_cargo(crate: Path, target_dir: Path, timeout: float) -> None:
    command = [
        "cargo",
        "build",
        "--release",
        "--offline",
        "--lib",
        "--message-format",
        "short",
        "--target-dir",
        str(target_dir),
    ]
    env = {**os.environ, "CARGO_TERM_COLOR": "never"}
    try:
        # A session of its own, so a timeout stops rustc as well as cargo.
        process = subprocess.Popen(
            command,
            cwd=crate,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
    except FileNotFoundError:
        raise ContractError("cargo is not installed: a Rust port needs cargo and rustc") from None
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise BuildError(f"cargo build did not finish within {timeout:g} s") from None
    if process.returncode != 0:
        raise BuildError(f"cargo build failed: {first_errors(output)}")


def build_crate(port_dir: Path, timeout: float = BUILD_TIMEOUT, root: Path | None = None) -> Path:
    """The path of the port's built library, building it (in `root`, by default the user's
    cache) unless the cache has it."""
    if not (port_dir / "Cargo.toml").is_file():
        raise ContractError(f"{port_dir}: a Rust port needs Cargo.toml (a cdylib crate)")
    root = root or cache_root()
    library = root / source_key(port_dir) / f"libenvport_port{_SUFFIX}"
    if library.is_file():
        return library
    root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="build-", dir=root) as scratch:
        crate = Path(scratch) / "crate"
        shutil.copytree(port_dir, crate, ignore=shutil.ignore_patterns(*_IGNORED))
        _run_cargo(crate, Path(scratch) / "target", timeout)
        built = sorted((Path(scratch) / "target" / "release").glob(f"*{_SUFFIX}"))
        if not built:
            raise ContractError(
                'the crate builds no C library: set `crate-type = ["cdylib"]` under [lib] '
                "in Cargo.toml"
            )
        library.parent.mkdir(parents=True, exist_ok=True)
        # Copy then rename: a worker building the same code at once never loads half a file.
        partial = library.with_suffix(f".{os.getpid()}.part")
        shutil.copyfile(built[0], partial)
        os.replace(partial, library)
    return library
