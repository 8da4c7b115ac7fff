"""What a Rust port's crate may contain before envport compiles it.

Compiling a crate must run none of its code: a build script (`build.rs`) and a procedural
macro run at build time, a dependency brings code nobody reviewed, and a `.cargo/config`
or `rust-toolchain` file can name programs cargo runs. Each is refused, in one line naming
the file, unless the spec allows it (`targets.rust.allow_crates`,
`targets.rust.allow_build_code`).
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from envport.io.tree import files_under
from envport.targets.loader import ContractError

# Files that would make cargo or rustup run a program of the crate's choosing.
_TOOL_FILES = (".cargo", "rust-toolchain", "rust-toolchain.toml")
_DEPENDENCY_TABLES = ("dependencies", "dev-dependencies", "build-dependencies")


def _dependencies(manifest: dict[str, Any]) -> list[str]:
    names = [name for table in _DEPENDENCY_TABLES for name in manifest.get(table, {}) or {}]
    for platform in (manifest.get("target") or {}).values():
        if isinstance(platform, dict):
            names += [n for table in _DEPENDENCY_TABLES for n in platform.get(table, {}) or {}]
    return names


def refusal(crate: Path, allow_crates: list[str], allow_build_code: bool) -> str | None:
    """Why the crate at `crate` may not be built, in one line naming the file; None if it
    may."""
    for path in files_under(crate):
        parts = path.relative_to(crate).parts
        for depth, part in enumerate(parts, 1):
            if part in _TOOL_FILES:
                named = "/".join(parts[:depth])
                return f"{named}: cargo and rustup settings are not allowed in a port"
    manifest_path = crate / "Cargo.toml"
    try:
        manifest = tomllib.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return None  # cargo says what is wrong with it
    package = manifest.get("package") or {}
    build = package.get("build") if isinstance(package, dict) else None
    if not allow_build_code:
        if (crate / "build.rs").exists() or build not in (None, False):
            named = build if isinstance(build, str) else "build.rs"
            return (
                f"{named}: build scripts are not allowed (they run at build time; the spec "
                "may allow them with targets.rust.allow_build_code)"
            )
        lib = manifest.get("lib") or {}
        if isinstance(lib, dict) and (lib.get("proc-macro") or lib.get("proc_macro")):
            return (
                "Cargo.toml: proc-macro crates are not allowed (they run at build time; the "
                "spec may allow them with targets.rust.allow_build_code)"
            )
    for table in ("patch", "replace"):
        if manifest.get(table):
            return f"Cargo.toml: [{table}] is not allowed in a port"
    outside = [name for name in _dependencies(manifest) if name not in allow_crates]
    if outside:
        return (
            f"Cargo.toml: dependency `{outside[0]}` is outside std (the spec may allow it with "
            "targets.rust.allow_crates)"
        )
    return None


def check(crate: Path, allow_crates: list[str], allow_build_code: bool) -> None:
    why = refusal(crate, allow_crates, allow_build_code)
    if why is not None:
        raise ContractError(f"refused to build the crate: {why}")
