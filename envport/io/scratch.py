"""Scratch directories the driver makes and removes, removed without following a link out.

What a port or a build leaves in a scratch directory is untrusted. `shutil.rmtree` under
`tempfile.TemporaryDirectory.cleanup` answers a permission error by chmod-ing the path it
could not remove, and a symlink there is followed: as a non-root user, a link left in an
unwritable folder made the driver chmod the link's target (CPython's CVE-2023-6597, unfixed
in some Pythons still in use). Here every directory is opened with O_NOFOLLOW and worked
through its descriptor; a link is only ever unlinked, never followed, chmod-ed or entered.

Standard library only: a test runs this file as another user under the system Python.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_PATH = getattr(os, "O_PATH", 0) | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _open_directory(name: str, parent: int | None) -> int:
    """A descriptor of the directory `name` itself (never of a link's target), made
    readable and writable by its owner first when it was not: through /proc's link to the
    descriptor, so the mode that changes is the directory's."""
    try:
        return os.open(name, _DIRECTORY, dir_fd=parent)
    except PermissionError:
        handle = os.open(name, _PATH, dir_fd=parent)
        try:
            os.chmod(f"/proc/self/fd/{handle}", 0o700)
            # The descriptor's own link, followed on purpose: it names the directory opened
            # above (O_NOFOLLOW there), whatever the name points at now.
            return os.open(f"/proc/self/fd/{handle}", _DIRECTORY & ~os.O_NOFOLLOW)
        finally:
            os.close(handle)


def _identity(info: os.stat_result) -> tuple[int, int]:
    return (info.st_dev, info.st_ino)


def _make_writable(directory: int) -> None:
    with contextlib.suppress(OSError):
        # Entries cannot be removed from a folder its owner made read-only.
        if stat.S_IMODE(os.fstat(directory).st_mode) & 0o700 != 0o700:
            os.fchmod(directory, 0o700)


class _Level:
    """One directory on the way down: its name in its parent, what it is, and the names
    inside it not yet looked at. (Not a dataclass: a test loads this file alone, outside
    `sys.modules`, where dataclasses cannot look their module up.)"""

    def __init__(self, name: str, identity: tuple[int, int], pending: list[str]) -> None:
        self.name = name
        self.identity = identity
        self.pending = pending


def _empty(top: int) -> None:
    """Remove everything inside the open directory `top`, links as names only.

    A loop, not a recursion: a port can leave a folder thousands of levels deep, deeper than
    Python's recursion limit. Only the directory being emptied is held open (a deep tree must
    not exhaust the open-file limit); the way back up is its `..`, taken only when it is the
    very directory we came down from (a folder moved meanwhile ends the walk, never leads it
    outside)."""
    current = os.dup(top)
    _make_writable(current)
    path = [_Level("", _identity(os.fstat(current)), os.listdir(current))]
    # Folders that could not be entered or removed: passed over when seen again.
    left: set[tuple[int, int]] = set()
    try:
        while True:
            level = path[-1]
            inner = None
            while level.pending and inner is None:
                name = level.pending.pop()
                try:
                    info = os.stat(name, dir_fd=current, follow_symlinks=False)
                except FileNotFoundError:
                    continue
                if not stat.S_ISDIR(info.st_mode):
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(name, dir_fd=current)
                elif _identity(info) not in left:
                    try:
                        inner = _open_directory(name, current)
                    except OSError:
                        left.add(_identity(info))  # replaced meanwhile: left, never followed
                        continue
                    opened = _identity(os.fstat(inner))
                    _make_writable(inner)
                    os.close(current)
                    current = inner
                    path.append(_Level(name, opened, os.listdir(current)))
            if inner is not None:
                continue
            if len(path) == 1:
                return
            parent = os.open("..", _DIRECTORY, dir_fd=current)
            if _identity(os.fstat(parent)) != path[-2].identity:
                os.close(parent)
                return  # moved while we were inside: what is left stays
            os.close(current)
            current = parent
            done = path.pop()
            try:
                os.rmdir(done.name, dir_fd=current)
            except OSError:
                left.add(done.identity)
    finally:
        os.close(current)


def remove_tree(path: Path | str) -> None:
    """Remove `path` and all inside it, following no link: a link named `path` is removed
    itself, a link inside is unlinked, and no mode outside the tree ever changes."""
    path = os.path.abspath(os.fspath(path))
    parent_path, name = os.path.split(path)
    parent = os.open(parent_path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        try:
            info = os.stat(name, dir_fd=parent, follow_symlinks=False)
        except FileNotFoundError:
            return
        if not stat.S_ISDIR(info.st_mode):
            os.unlink(name, dir_fd=parent)
            return
        directory = _open_directory(name, parent)
        try:
            _empty(directory)
        finally:
            os.close(directory)
        os.rmdir(name, dir_fd=parent)
    finally:
        os.close(parent)


def make_scratch(prefix: str, within: Path | str | None = None) -> Path:
    """A new private directory, to be removed with `remove_tree`."""
    return Path(tempfile.mkdtemp(prefix=prefix, dir=within))


@contextlib.contextmanager
def scratch(prefix: str, within: Path | str | None = None) -> Iterator[Path]:
    """A private directory for the `with` block, removed link-safely after it."""
    made = make_scratch(prefix, within)
    try:
        yield made
    finally:
        remove_tree(made)
