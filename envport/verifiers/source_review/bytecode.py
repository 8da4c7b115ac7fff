"""A port's `__pycache__`: bytecode Python would load instead of the source the review read.

Anyone who imported a port once (its author, a test, a user trying it) leaves a
`__pycache__` beside its modules, so refusing every `.pyc` would refuse nearly every port
handed to `envport verify`. What matters is whether a `.pyc` can make an import run other
code than the reviewed source: Python loads `__pycache__/<module>.<tag>.pyc` only when its
header matches the source (a timestamp pyc: the source's mtime and size; a hash pyc: its
SipHash, checked or not), and then runs its code object without reading the source. So a
`.pyc` is judged as this interpreter's import system would use it:

- for another interpreter (another tag), no source beside it, or a header the source does
  not match: never loaded in its place (a user on another Python version has their own
  pycache, written from the same source);
- a header the source matches: loaded instead of the source, so its code must be the
  source's own, compiled here: refused otherwise, as code the review did not read.

`marshal.loads` only rebuilds the code object; nothing in it runs.
"""

from __future__ import annotations

import importlib.util
import marshal
import sys
from pathlib import Path
from types import CodeType

_MAGIC = importlib.util.MAGIC_NUMBER
_TAG = sys.implementation.cache_tag
# The PEP 552 flags word: bit 0 hash-based, bit 1 check the source's hash.
_HASH_BASED = 0b01
_CHECK_SOURCE = 0b10


def refused(pyc: Path) -> str | None:
    """Why this `__pycache__` file would run code the review did not read, or None."""
    name = pyc.name
    if pyc.parent.name != "__pycache__" or not name.endswith(".pyc"):
        return "bytecode outside `__pycache__` (Python imports it with no source to read)"
    stem, _, rest = name[: -len(".pyc")].partition(".")
    tag, _, optimization = rest.partition(".opt-")
    if tag != _TAG:
        return None  # another interpreter's: this one never loads it
    source = pyc.parent.parent / f"{stem}.py"
    if not source.is_file():
        return None  # Python loads a `__pycache__` file only beside its source
    data = pyc.read_bytes()
    source_bytes = source.read_bytes()
    if len(data) < 16 or data[:4] != _MAGIC:
        return None  # not this interpreter's format: rejected at import, the source used
    flags = int.from_bytes(data[4:8], "little")
    if flags & _HASH_BASED:
        checked = bool(flags & _CHECK_SOURCE)
        if checked and importlib.util.source_hash(source_bytes) != data[8:16]:
            return None  # stale: Python compiles the source again
        # An unchecked hash pyc is loaded whatever the source now holds.
    else:
        stat = source.stat()
        mtime = int(stat.st_mtime) & 0xFFFFFFFF
        size = stat.st_size & 0xFFFFFFFF
        if data[8:12] != mtime.to_bytes(4, "little") or data[12:16] != size.to_bytes(4, "little"):
            return None  # stale: Python compiles the source again
    try:
        loaded = marshal.loads(data[16:])
    except (EOFError, ValueError, TypeError):
        return None  # unreadable: the import falls back to the source
    level = {"": 0, "1": 1, "2": 2}.get(optimization, -1)
    if level < 0:
        return "bytecode of an unknown optimisation level"
    try:
        compiled = compile(source_bytes, str(source), "exec", dont_inherit=True, optimize=level)
    except (SyntaxError, ValueError):
        return "bytecode for a source that does not compile"
    if not isinstance(loaded, CodeType) or not _same(loaded, compiled):
        return "bytecode that is not its source compiled (a crafted or foreign .pyc)"
    return None


def _same(a: CodeType, b: CodeType) -> bool:
    """The two code objects do the same: their bytecode, names and constants, nested code
    objects compared the same way (file names may differ: where it was compiled)."""
    fields: tuple[str, ...] = ("co_code", "co_names", "co_varnames", "co_freevars", "co_cellvars")
    fields += ("co_exceptiontable",) if hasattr(a, "co_exceptiontable") else ()
    if any(getattr(a, f) != getattr(b, f) for f in fields):
        return False
    if len(a.co_consts) != len(b.co_consts):
        return False
    for x, y in zip(a.co_consts, b.co_consts, strict=True):
        if isinstance(x, CodeType) or isinstance(y, CodeType):
            if not (isinstance(x, CodeType) and isinstance(y, CodeType) and _same(x, y)):
                return False
        elif type(x) is not type(y) or x != y:
            return False
    return True
