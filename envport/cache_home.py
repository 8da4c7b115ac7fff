"""Where envport keeps what it can rebuild: built Rust ports, Hypothesis's own caches.

`$ENVPORT_CACHE_DIR`, else `$XDG_CACHE_HOME/envport`, else `~/.cache/envport`: never the
directory a command runs in, which belongs to the user.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_home() -> Path:
    explicit = os.environ.get("ENVPORT_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "envport"
