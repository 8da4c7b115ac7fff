"""Files that must survive a kill: atomic writes, kernel-held locks, keyed JSON caches.

The lowest layer beside `errors`: it knows nothing of runs, models or ports, so every
package may use it (docs/design.md, Layers).
"""

from envport.io.atomic import write_atomically
from envport.io.json_cache import JsonCache
from envport.io.lock import FileLock

__all__ = ["FileLock", "JsonCache", "write_atomically"]
