"""The reference's `[state.reached]` play kept on disk, by what it follows from.

The episodes and the book's lines follow from the spec alone (draws/reached.py), and a slow
reference pays for them on every verify: chess's 12 games and 4,800 book lines are most of
its L1. They are the trusted reference's own answers, so the driver keeps them under
envport's cache (`reached/`, which no worker can see or write) keyed by everything they
follow from: the spec as loaded, every Python file of the folders holding the harness files
it names (the bridge that reads and writes the reference's state, the book), the source of
the reference's packages (the entry's and each `[reference] sources` module's top-level
package), the installed distributions and their versions, the Python version, and envport's
own code that plays them. Anything else changed is a new key; a key whose inputs cannot all
be read is no key, and the play is not kept. Removing the folder is always safe.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import importlib.metadata
import importlib.util
import os
import pickle
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from envport.cache_home import cache_home
from envport.spec import PortSpec

# A harness file may import its neighbours, never what these folders hold.
_SKIPPED = {"ports", "port", "replay", "__pycache__", ".git", "runs", "reports"}
# A reference package larger than this is not hashed (nor its play kept): hashing it would
# cost more than it saves.
_MAX_SOURCE_BYTES = 64 << 20
# Plays kept (of every kind); the oldest go first.
_KEPT = 16
# envport's own modules whose code decides what is played.
_PLAYERS = (
    "envport/verifiers/draws/reached.py",
    "envport/verifiers/draws/book.py",
    "envport/verifiers/draws/turns.py",
    "envport/verifiers/draws/policies.py",
    "envport/targets/reference.py",
    "envport/targets/turns.py",
)


def directory() -> Path:
    return cache_home() / "reached"


def key(spec: PortSpec, players: tuple[str, ...] = _PLAYERS, what: str = "") -> str | None:
    """The digest of everything the spec's reached play follows from, or None when some of
    it cannot be read (then nothing is kept). Other play of the reference's kept here (the
    reset sample of l2.reset) names its own `players`, envport's files that decide it, and
    `what` it is (with its seed), so no two kinds share a key."""
    digest = hashlib.sha256()
    digest.update(what.encode() + b"\0")
    digest.update(spec.model_dump_json().encode())
    digest.update(sys.version.encode())
    try:
        for folder in sorted(_harness_folders(spec)):
            digest.update(f"\0harness {folder}\0".encode())
            for file in _python_files(folder):
                digest.update(str(file.relative_to(folder)).encode() + b"\0" + file.read_bytes())
        for top in sorted(_reference_packages(spec)):
            digest.update(f"\0package {top}\0".encode())
            if not _hash_package(digest, top):
                return None
        root = Path(__file__).resolve().parents[3]
        for relative in players:
            digest.update((root / relative).read_bytes())
    except OSError:
        return None
    digest.update(_installed().encode())
    return digest.hexdigest()


@functools.cache
def _installed() -> str:
    """The installed distributions and their versions, read once a process (a quarter of a
    second each time: every kept draw's key asks)."""
    found = {f"{d.metadata['Name']}=={d.version}" for d in importlib.metadata.distributions()}
    return "\n".join(sorted(found))


def load(found: str) -> Any | None:
    """The play kept under `found`, or None (absent, or unreadable: played again)."""
    path = directory() / f"{found}.pickle.gz"
    try:
        with gzip.open(path, "rb") as file:
            kept = pickle.load(file)  # written by this driver only (module docstring)
    except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ValueError):
        return None
    os.utime(path)  # the newest used are kept longest
    return kept


def store(found: str, played: Any) -> None:
    """Keep `played` under `found`, written whole or not at all; the oldest beyond _KEPT go."""
    folder = directory()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{found}.pickle.gz"
    partial = folder / f".{found}.{os.getpid()}.tmp"
    try:
        with gzip.open(partial, "wb", compresslevel=1) as file:
            pickle.dump(played, file, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(partial, path)
    except (OSError, pickle.PicklingError, TypeError, AttributeError):
        # Unwritable, or holding something pickle cannot take (a reference's info dict may
        # carry any object): not kept, drawn again next time.
        partial.unlink(missing_ok=True)
        return
    kept = sorted(folder.glob("*.pickle.gz"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in kept[_KEPT:]:
        old.unlink(missing_ok=True)


def _reference_packages(spec: PortSpec) -> set[str]:
    """The top-level packages the reference's code comes from: the entry's module (not a
    harness file, which the spec's folder holds) and each `sources` module's."""
    names = [*spec.reference.sources]
    prefix, _, _ = spec.reference.entry.partition(":")
    if prefix == "gymnasium":
        names.append("gymnasium")
    elif not prefix.endswith(".py"):
        names.append(prefix)
    return {name.split(".")[0] for name in names if name}


def _hash_package(digest: Any, top: str) -> bool:
    """Every Python file of package `top`, in order; False when it cannot be found or is
    larger than _MAX_SOURCE_BYTES."""
    found = importlib.util.find_spec(top)
    if found is None:
        return False
    if found.submodule_search_locations:
        roots = [Path(p) for p in found.submodule_search_locations]
    elif found.origin:
        roots = [Path(found.origin)]
    else:
        return False
    total = 0
    for root in roots:
        files = [root] if root.is_file() else sorted(_python_files(root))
        for file in files:
            data = file.read_bytes()
            total += len(data)
            if total > _MAX_SOURCE_BYTES:
                return False
            digest.update(str(file.relative_to(root.parent)).encode() + b"\0" + data)
    return True


def _python_files(root: Path) -> Iterator[Path]:
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = sorted(d for d in subfolders if d not in _SKIPPED)
        for name in sorted(files):
            if name.endswith(".py"):
                yield Path(folder) / name


def _harness_folders(spec: PortSpec) -> set[Path]:
    """The folders of the harness files the spec names (each `path.py:name` key, and each
    target's probes file, whose `arrange` functions make some of L1's draws)."""
    named = [
        spec.reference.entry,
        spec.state.read,
        spec.state.write,
        spec.state.helpers,
        spec.state.reached.book if spec.state.reached else None,
        spec.game.moves if spec.game else None,
        spec.levels.l3.policy,
        *(target.probes for target in spec.targets.values()),
    ]
    files = {str(n).partition(":")[0] for n in named if n}
    return {spec.harness_file(f).parent for f in files if f.endswith(".py")}
