"""The harness files a run froze (L1 probes, a noise harness, a rules document): hashed when
the run starts and checked before every use.

The driver and the verifier import probe and noise-harness files. A port worker never gets
write access to them (the sandbox mounts them read-only or not at all); this is the second
lock: a file that changed since the run started is never executed, and the run fails loudly.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from envport.errors import EnvportError

MANIFEST = "harness.sha256.json"
# A harness file sits at most this deep below its run's root (probes/jax.py, a/b/c.py).
_DEPTH = 6


class HarnessChanged(EnvportError):
    """A frozen harness file no longer has the content it had when the run started."""

    def __init__(self, message: str) -> None:
        super().__init__(message, exit_code=1)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def freeze(root: Path, files: list[Path]) -> None:
    """Record the files' hashes in the run and make them read-only."""
    recorded = {str(f.relative_to(root)): digest(f) for f in sorted(set(files))}
    for path in files:
        os.chmod(path, 0o444)
    (root / MANIFEST).write_text(json.dumps(recorded, indent=2) + "\n", encoding="utf-8")


def _run_root(path: Path) -> Path | None:
    for parent in list(path.parents)[:_DEPTH]:
        if (parent / MANIFEST).is_file():
            return parent
    return None


def check(path: Path) -> None:
    """Raise HarnessChanged unless `path` is as the run froze it. Files outside a run (an
    example's own probes) have nothing to check against."""
    path = path.resolve()
    root = _run_root(path)
    if root is None:
        return
    try:
        recorded = json.loads((root / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise HarnessChanged(
            f"{root / MANIFEST}: unreadable ({error}); the run cannot be trusted"
        ) from None
    relative = str(path.relative_to(root))
    expected = recorded.get(relative)
    if expected is None:
        raise HarnessChanged(f"{path}: not a harness file this run froze; refusing to execute it")
    if digest(path) != expected:
        raise HarnessChanged(
            f"harness file {path} changed since the run started (sha256 differs from "
            f"{root / MANIFEST}): something wrote to it; refusing to execute it, the run "
            "cannot be trusted"
        )
