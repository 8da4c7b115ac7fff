"""JAX's persistent compilation cache for a port: one directory per port's content.

A JAX port's verify compiles its step for every batch shape the checks ask for; every
repair iteration and every CI gate of the same port would pay it again. JAX can keep the
compiled programs on disk (`jax_compilation_cache_dir`). The worker writes them, and a
worker runs untrusted code: an entry it writes is code a later process loads. So each
port gets a directory of its own, named by the driver from what it knows (the SHA-256 of
the port's files, the jax and jaxlib versions, the target), mounted writable only in the
workers of that same port. A port cannot reach another port's entries (not mounted), and
an entry it plants under its own key is loaded only by a port with the same files: itself.

The driver bounds the total size: before a worker starts, the directories used longest
ago are removed (without following a link) until the rest fit.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from importlib import metadata
from pathlib import Path

from envport.io.scratch import remove_tree

# The most bytes all ports' compilation caches keep together (the driver prunes to it).
CACHE_BYTES = 512 << 20


def _versions() -> str:
    found = []
    for name in ("jax", "jaxlib"):
        try:
            found.append(f"{name}={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            found.append(f"{name}=absent")
    return ",".join(found)


def port_key(port_dir: Path, target: str, entry: str) -> str:
    """SHA-256 of the port's regular files (their paths and bytes; links are not followed,
    bytecode left out), the jax and jaxlib versions and the target's name and entry."""
    digest = hashlib.sha256()
    digest.update(f"{_versions()}\0{target}\0{entry}\0".encode())
    root = Path(port_dir)
    for folder, folders, files in os.walk(root):
        folders[:] = sorted(f for f in folders if f != "__pycache__")
        for name in sorted(files):
            path = Path(folder) / name
            if path.is_symlink() or not path.is_file():
                continue
            digest.update(path.relative_to(root).as_posix().encode() + b"\0")
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def port_cache_dir(root: Path, port_dir: Path, target: str, entry: str) -> Path:
    """The port's own directory under `root` (not created)."""
    return root / port_key(port_dir, target, entry)


def _size(directory: Path) -> int:
    total = 0
    for folder, _, files in os.walk(directory):
        for name in files:
            # A file JAX removes meanwhile no longer counts.
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(folder, name)).st_size
    return total


def prepare(directory: Path, limit: int = CACHE_BYTES) -> None:
    """Create the port's directory, mark it used now, and remove the directories of other
    ports used longest ago until all of them fit in `limit` bytes."""
    root = directory.parent
    directory.mkdir(parents=True, exist_ok=True)
    os.utime(directory)
    entries = []
    for child in root.iterdir():
        # Another driver (a batch, a parallel CI job) may be pruning the same folders.
        with contextlib.suppress(OSError):
            if not child.is_symlink() and child.is_dir():
                entries.append((child.stat().st_mtime, child, _size(child)))
    total = sum(size for _, _, size in entries)
    for _, child, size in sorted(entries, key=lambda found: found[0]):
        if total <= limit:
            break
        if child == directory:
            continue
        with contextlib.suppress(OSError):
            remove_tree(child)
        total -= size


def enable(directory: str) -> None:
    """In the worker, before the port is imported: JAX reads and writes compiled programs
    in `directory`, every one of them (no minimum compile time or size: CartPole's step
    compiles in a fraction of a second, and those are what a verify has many of)."""
    import jax

    jax.config.update("jax_compilation_cache_dir", directory)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    jax.monitoring.register_event_listener(_count)


# The worker's cache lookups so far, by JAX's own events (a ping answer reports them).
COUNTS = {"hits": 0, "misses": 0}
_EVENTS = {
    "/jax/compilation_cache/cache_hits": "hits",
    "/jax/compilation_cache/cache_misses": "misses",
}


def _count(event: str, **_: object) -> None:
    if event in _EVENTS:
        COUNTS[_EVENTS[event]] += 1
