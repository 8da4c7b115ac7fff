"""The shared cache of built Rust ports: written by the driver only, read-only in workers.

A worker compiles a crate in its own scratch directory. The driver, after a build worker
has compiled a crate (one that loads nothing: the crate's code never runs there), copies
the library out of that worker's scratch without following a link, hashes it and stores
it under the key it computed itself from the crate's files. A worker finds a library by
that key and loads it only if its bytes still have the recorded digest. No worker can
write here (the cache is mounted read-only), so no build can plant a library under
another crate's key.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

LIBRARY = "libenvport_port.so"
DIGEST = "sha256"
# Where a build worker leaves the library it compiled, in its own scratch directory.
BUILT = "built-" + LIBRARY


def _read_no_follow(path: Path) -> bytes | None:
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(handle, "rb") as file:
        return file.read()


def cached(root: Path, key: str) -> Path | None:
    """The stored library for `key` when its bytes match the digest stored beside it."""
    entry = root / key
    data = _read_no_follow(entry / LIBRARY)
    recorded = _read_no_follow(entry / DIGEST)
    if data is None or recorded is None:
        return None
    if hashlib.sha256(data).hexdigest() != recorded.decode(errors="replace").strip():
        return None
    return entry / LIBRARY


def store(built: Path, root: Path, key: str) -> Path | None:
    """Store the library a build worker left at `built` under `key` (the driver's own);
    None when there is no regular file there."""
    data = _read_no_follow(built)
    if data is None:
        return None
    entry = root / key
    entry.mkdir(parents=True, exist_ok=True)
    suffix = f".{os.getpid()}.part"
    # Library first, digest last: a reader sees a digest only beside the bytes it names.
    for name, content in ((LIBRARY, data), (DIGEST, hashlib.sha256(data).hexdigest().encode())):
        part = entry / (name + suffix)
        part.write_bytes(content)
        os.replace(part, entry / name)
    return entry / LIBRARY
