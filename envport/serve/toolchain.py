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
import shutil
import subprocess
from dataclasses import dataclass


@dataclass(frozen=True)
class Toolchain:
    """Directories a build worker reads (`roots`) and runs programs from (`bins`)."""

    roots: tuple[str, ...]
    bins: tuple[str, ...]


def _sysroot() -> str | None:
    rustc = shutil.which("rustc")
    if rustc is None:
        return None
    try:
        done = subprocess.run(
            [rustc, "--print", "sysroot"],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    root = done.stdout.strip()
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
