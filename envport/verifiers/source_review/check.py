"""`review.static`: the port's source reviewed before any of it runs (docs/isolation.md).

A port that looks at its surroundings can behave only while it is watched, and no check
in a recognisable environment rules that out. So before the worker starts, every source
file of the port is read (never imported) and each construct that could see the process,
its files, its clock or its environment, or import or evaluate code the review cannot
read, is a divergence naming the file, the line and the rule, which a translate run's
repair prompt shows the model.
"""

from __future__ import annotations

import ast
import importlib.machinery
import os
import tomllib
from pathlib import Path

from envport.spec import PortSpec
from envport.targets.registry import TargetChoice, TargetName
from envport.verifiers.reporting.divergence import Divergence, LevelResult
from envport.verifiers.source_review import bytecode, rules
from envport.verifiers.source_review.constants import identifiers
from envport.verifiers.source_review.python import Allowed, Finding, review_python
from envport.verifiers.source_review.rust import review_rust

# Files Python would import beside a module's source: compiled modules and bytecode (a
# crafted `__pycache__` file is loaded instead of the source it claims to match).
_COMPILED = tuple(s for s in importlib.machinery.all_suffixes() if s != ".py")
_NATIVE = "a compiled module the review cannot read"


def _files(port: Path, endings: tuple[str, ...]) -> tuple[list[Path], list[Finding]]:
    """The port's source files (relative), and what is refused for being there at all: a
    link (the review reads only the port's own files) or, in a Python port, compiled
    Python."""
    python = ".py" in endings
    sources: list[Path] = []
    refused: list[Finding] = []
    for folder, dirs, names in os.walk(port):
        here = Path(folder)
        for name in sorted([*dirs, *names]):
            path = here / name
            relative = str(path.relative_to(port))
            if path.is_symlink():
                why = "a link in a port (the review reads only the port's own files); copy it in"
                refused.append(Finding(relative, 0, "link", why, "files"))
            elif python and name in names and name.endswith(_COMPILED):
                # A `__pycache__` file that is its source compiled is what importing the
                # port leaves; one Python would load in the source's place is not.
                compiled = bytecode.refused(path) if name.endswith(".pyc") else _NATIVE
                if compiled is not None:
                    why = compiled + "; remove it (and any __pycache__)"
                    refused.append(Finding(relative, 0, "compiled file", why, "files"))
            elif name in names and name.endswith(endings):
                sources.append(path.relative_to(port))
        # A crate's `target/` is cargo's output (a local build's), not the crate's source.
        skip = {"target"} if not python and here == port else set()
        dirs[:] = sorted(d for d in dirs if not (here / d).is_symlink() and d not in skip)
    return sorted(sources), refused


def _build_scripts(port: Path) -> set[Path]:
    """A crate's build script: code run by cargo, not part of the library, and judged by
    the crate policy (refused unless the spec allows build code, which then trusts it)."""
    scripts = {Path("build.rs")}
    try:
        package = tomllib.loads((port / "Cargo.toml").read_text(encoding="utf-8")).get("package")
    except (OSError, tomllib.TOMLDecodeError):
        return scripts
    build = package.get("build") if isinstance(package, dict) else None
    return scripts | ({Path(build)} if isinstance(build, str) else set())


# The manifest's tables that name a source file cargo compiles.
_TARGET_TABLES = ("lib", "bin", "example", "test", "bench")


def _manifest_sources(port: Path) -> list[Finding]:
    """A crate source the manifest names that the review would not read: a target whose
    `path` is not a `.rs` file inside the crate (`[lib] path = "src/lib.txt"`)."""
    try:
        manifest = tomllib.loads((port / "Cargo.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return []  # cargo says what is wrong with it
    found = []
    for table in _TARGET_TABLES:
        entries = manifest.get(table)
        for entry in entries if isinstance(entries, list) else [entries]:
            named = entry.get("path") if isinstance(entry, dict) else None
            if named is None:
                continue
            inside = (port / str(named)).resolve().is_relative_to(port.resolve())
            if not (isinstance(named, str) and named.endswith(".rs") and inside):
                why = "a crate source that is not one of the crate's own .rs files"
                found.append(
                    Finding("Cargo.toml", 0, f"`[{table}] path = {named!r}`", why, "files")
                )
    return found


def allowed_imports(spec: PortSpec, target: str) -> tuple[str, ...]:
    """A Python target's imports: its own allowlist and the spec's `allow_imports`; a port
    whose target is not settled (`auto`) gets both Python targets'."""
    names = [target] if target in rules.PYTHON_IMPORTS else list(rules.PYTHON_IMPORTS)
    found = [
        m for name in names for m in (*rules.PYTHON_IMPORTS[name], *spec.target(name).allow_imports)
    ]
    return tuple(dict.fromkeys(found))


def review_port(port: Path, spec: PortSpec, chosen: TargetChoice) -> list[Finding]:
    """Every refusal in the port's source, file by file in order: a crate's `.rs` files, a
    Python port's `.py` files; both when the target is not settled (`auto`), so a stray
    `Cargo.toml` never hides a Python port's source from the review."""
    found: list[Finding] = []
    if chosen.name == TargetName.RUST or (port / "Cargo.toml").is_file():
        sources, refused = _files(port, (".rs",))
        found += refused + _manifest_sources(port)
        for relative in [path for path in sources if path not in _build_scripts(port)]:
            text = (port / relative).read_text(encoding="utf-8", errors="replace")
            found += review_rust(text, str(relative), chosen.allow_crates)
    if chosen.name == TargetName.RUST:
        return found
    sources, refused = _files(port, (".py",))
    found += [finding for finding in refused if finding not in found]
    own = frozenset(p.with_suffix("").parts[0] for p in sources)
    label = chosen.name if chosen.name in rules.PYTHON_IMPORTS else "|".join(rules.PYTHON_IMPORTS)
    allowed = Allowed(label, allowed_imports(spec, chosen.name), own)
    codes = {relative: (port / relative).read_bytes() for relative in sources}
    used = {relative: _identifiers(code) for relative, code in codes.items()}
    for relative, code in codes.items():
        others = [names for other, names in used.items() if other != relative]
        found += review_python(code, str(relative), allowed, frozenset().union(*others))
    return found


def _identifiers(source: bytes) -> set[str]:
    try:
        return identifiers(ast.parse(source))
    except (SyntaxError, ValueError):
        return set()


# Refusals listed in the report's one divergence (the JSON keeps them all).
SHOWN = 16


def check_review(port: Path, spec: PortSpec, chosen: TargetChoice) -> LevelResult:
    """The review as the report's first check: one divergence listing every refusal, so the
    terminal and a translate's repair prompt show each line and its rule."""
    found = review_port(port, spec, chosen)
    if not found:
        note = "the port's source: nothing refused"
        return LevelResult(level="review", mode="static", passed=True, note=note)
    lines = [finding.text() for finding in found]
    shown = lines[:SHOWN] + ([f"and {len(lines) - SHOWN} more"] if len(lines) > SHOWN else [])
    message = f"{len(found)} refused in the port's source:\n" + "\n".join(
        f"  {line}" for line in shown
    )
    return LevelResult(
        level="review",
        mode="static",
        passed=False,
        diverged_episodes=len(found),
        divergences=[Divergence(level="review", mode="static", message=message)],
        note=f"{len(found)} refused in the port's source",
    )
