"""The Rust compiler a build worker sees: the toolchain's own directory, nothing of its homes.

`$CARGO_HOME` holds `credentials.toml` (a crates.io publish token), `config.toml` (which can
name programs cargo runs), and the registry and git checkouts; `$RUSTUP_HOME` holds
rustup's settings and every installed toolchain. A build needs none of them: the active
toolchain's directory (`rustc --print sysroot`: its `bin/` holds cargo and rustc, its
`lib/` their libraries) is the compiler whole. Under rustup that is
`$RUSTUP_HOME/toolchains/<name>`; a system rustc's sysroot is `/usr`, already visible.
The worker calls the toolchain's own cargo (first on its PATH), not rustup's proxies in
`$CARGO_HOME/bin`, which would need rustup's home to pick a toolchain; cargo then finds
its home under the worker's `HOME`, an empty folder in its scratch.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from dataclasses import dataclass

from envport.errors import EnvportError

# The oldest Rust every known-good Rust port (examples/*/ports/rust) was built with: Debian
# 12's oldest `rustc-web`, 1.85. Their code needs 1.77 or later (C string literals,
# `c"..."`, which the Rust prompt asks for; `div_ceil` 1.73, `OnceLock` 1.70), but no
# compiler between the two was tried, and a minimum is one the ports are shown to build
# with (docs/development.md says how). The one place this is stated: `./dev` reads it from
# this line to choose the compiler it installs.
MINIMUM_RUST = "1.85"
# What to install, for the line that refuses an older compiler.
RUST_INSTALL = "Debian 12: `apt-get install cargo-web`; elsewhere: rustup, https://rustup.rs"


@dataclass(frozen=True)
class Toolchain:
    """Directories a build worker reads (`roots`) and runs programs from (`bins`)."""

    roots: tuple[str, ...]
    bins: tuple[str, ...]


def _rustc_says(rustc: str, *args: str) -> str | None:
    """What `rustc ARGS` prints, or None when it cannot be run."""
    try:
        done = subprocess.run(
            [rustc, *args],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip()


def _version_of(rustc: str) -> tuple[int, int, int] | None:
    found = re.match(r"rustc (\d+)\.(\d+)\.(\d+)", _rustc_says(rustc, "--version") or "")
    return (int(found[1]), int(found[2]), int(found[3])) if found else None


@functools.cache
def rust_version() -> str | None:
    """The version of the rustc a build uses (`1.85.0`), or None when there is none."""
    rustc = shutil.which("rustc")
    version = _version_of(rustc) if rustc is not None else None
    return ".".join(map(str, version)) if version is not None else None


def require_rust() -> None:
    """Refuse, before any worker builds, a compiler too old for the ports (exit 2). With no
    rustc at all the build worker says "cargo is not installed" as the port's failure."""
    version = rust_version()
    if version is None:
        return
    have = tuple(int(part) for part in version.split("."))
    need = tuple(int(part) for part in MINIMUM_RUST.split("."))
    if have < need:
        raise EnvportError(
            f"rustc {version} ({shutil.which('rustc')}) is older than Rust {MINIMUM_RUST}, "
            f"the oldest that builds envport's Rust ports: install a newer one ({RUST_INSTALL}), "
            "first on PATH"
        )


def _sysroot() -> str | None:
    rustc = shutil.which("rustc")
    if rustc is None:
        return None
    root = _rustc_says(rustc, "--print", "sysroot")
    return os.path.realpath(root) if root and os.path.isdir(root) else None


@functools.cache
def rust() -> Toolchain:
    """The driver's own Rust toolchain (found once); empty when there is none, and a build
    worker then reports "cargo is not installed" in its own words."""
    sysroot = _sysroot()
    roots: list[str] = []
    bins: list[str] = []
    if sysroot is not None:
        roots.append(sysroot)
        bins.append(os.path.join(sysroot, "bin"))
    if sysroot is None or not os.path.exists(os.path.join(sysroot, "bin", "cargo")):
        # A cargo installed apart from rustc (a distribution's package): its real folder.
        cargo = shutil.which("cargo")
        if cargo is not None and os.path.basename(os.path.realpath(cargo)) == "cargo":
            folder = os.path.dirname(os.path.realpath(cargo))
            roots.append(folder)
            bins.append(folder)
    return Toolchain(tuple(roots), tuple(bins))
