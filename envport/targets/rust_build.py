"""Build a Rust port (a cdylib crate) with cargo, inside a worker process only.

The crate is copied into the worker's own scratch directory and built there, so the port
directory gets no `target/` or `Cargo.lock` (a port under review stays exactly what was
generated) and no build shares a directory with another. Nothing that would run the crate's
code at build time is built (`crate_policy`). Built libraries are shared through a cache
keyed by the crate's files and the compiler's version, which only the driver writes
(`envport.serve.crate_cache`): a repeated verify of unchanged code loads it again.

A crate still being generated (its first modules written, `src/lib.rs` not yet) is built as
a partial crate: the scratch copy gets a `src/lib.rs` declaring just those modules, and a
stock manifest if it has none, so each module's compile errors show as soon as it exists.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from envport.cache_home import cache_home
from envport.io.scratch import scratch as scratch_dir
from envport.io.tree import copy_tree, files_under, named
from envport.serve import crate_cache
from envport.targets import crate_policy
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
    return files_under(crate, lambda parts: parts[-1] in _IGNORED or parts[-1].startswith("."))


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


# The manifest a partial crate is built with when the port has none yet.
STOCK_MANIFEST = """[package]
name = "envport_port"
version = "0.1.0"
edition = "2021"

[lib]
crate-type = ["cdylib"]
path = "src/lib.rs"

[dependencies]
"""


def partial_lib(modules: list[str]) -> str:
    """The `src/lib.rs` of a partial crate: the modules written so far, nothing else."""
    declared = "".join(f"pub mod {name};\n" for name in modules)
    # Items only later modules will use are not worth a warning in a partial build.
    return "#![allow(dead_code, unused_imports)]\n" + declared


def source_key(crate: Path, extra: str = "") -> str:
    """Hash of every file of the crate (path and content), of the compiler version and of
    `extra` (what a partial build adds to the crate)."""
    digest = hashlib.sha256(_compiler_version().encode())
    digest.update(extra.encode() + b"\0")
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


def cache_key(port_dir: Path, partial: list[str] | None = None) -> str:
    """The key a crate's library is cached under: its files, the compiler, and what a
    partial build adds (a `src/lib.rs`, a stock manifest)."""
    lib = partial_lib(partial) if partial is not None else ""
    manifest = "" if (port_dir / "Cargo.toml").is_file() else STOCK_MANIFEST
    return source_key(port_dir, lib + manifest)


def build_crate(
    port_dir: Path,
    timeout: float = BUILD_TIMEOUT,
    root: Path | None = None,
    partial: list[str] | None = None,
    workdir: Path | None = None,
    allow_crates: list[str] | None = None,
    allow_build_code: bool = False,
) -> Path:
    """The path of the port's built library: the shared cache's (`root`, read-only here)
    when it holds this crate, else built in `workdir` (this worker's own scratch, by
    default the working directory) and left at `workdir/BUILT`. A crate whose build would
    run code of its own (a build script, a proc-macro, a dependency) is refused unless the
    spec allows it. `partial` names the modules of a crate still being generated: it is
    built with a `src/lib.rs` declaring only those."""
    if partial is None and not (port_dir / "Cargo.toml").is_file():
        raise ContractError(f"{port_dir}: a Rust port needs Cargo.toml (a cdylib crate)")
    if root is not None:
        hit = crate_cache.cached(root, cache_key(port_dir, partial))
        if hit is not None:
            return hit
    workdir = workdir or Path.cwd()
    lib = partial_lib(partial) if partial is not None else ""
    manifest = "" if (port_dir / "Cargo.toml").is_file() else STOCK_MANIFEST
    with scratch_dir("build-", workdir) as scratch:
        crate = scratch / "crate"
        copy_tree(port_dir, crate, named(*_IGNORED))
        if partial is not None:
            (crate / "src").mkdir(exist_ok=True)
            (crate / "src" / "lib.rs").write_text(lib, encoding="utf-8")
        if manifest:
            (crate / "Cargo.toml").write_text(manifest, encoding="utf-8")
        crate_policy.check(crate, allow_crates or [], allow_build_code)
        _run_cargo(crate, scratch / "target", timeout)
        built = sorted((scratch / "target" / "release").glob(f"*{_SUFFIX}"))
        if not built:
            raise ContractError(
                'the crate builds no C library: set `crate-type = ["cdylib"]` under [lib] '
                "in Cargo.toml"
            )
        library = workdir / crate_cache.BUILT
        shutil.copyfile(built[0], library)
    return library
