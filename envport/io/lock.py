"""One process at a time: a lock the kernel holds (flock) and drops when its process ends.

However the holder ends, nothing on disk can be stale, and no reader can mistake a lock
being written for an abandoned one. The file names the holder's PID, for messages only.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

from envport.errors import EnvportError


class FileLock:
    """An exclusive lock on `path`; `busy` words the refusal, given the holder's PID."""

    subject = "the file"  # what the lock guards, as a message names it

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def acquire(self) -> None:
        while True:
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as error:
                raise EnvportError(f"{self.path}: cannot lock {self.subject} ({error})") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = self._holder(fd)
                for _ in range(10):  # a holder that has just won writes its PID in a moment
                    if holder is not None:
                        break
                    time.sleep(0.01)
                    holder = self._holder(fd)
                os.close(fd)
                raise EnvportError(self.busy(holder)) from None
            # The holder before us unlinks the file as it lets go: a lock on a file no longer
            # at the path guards nothing, so take the one that is there now.
            if _same_file(fd, self.path):
                break
            os.close(fd)
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._fd = fd

    def busy(self, holder: int | None) -> str:
        who = f"process {holder}" if holder else "another process"
        return f"{self.path}: held by {who}"

    def release(self) -> None:
        if self._fd is None:
            return
        self.path.unlink(missing_ok=True)  # while still held, so no one locks a dying file
        os.close(self._fd)
        self._fd = None

    def holder(self) -> int | None:
        """The PID the lock file names (a hint: the lock itself is the kernel's)."""
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except OSError:
            return None
        try:
            return self._holder(fd)
        finally:
            os.close(fd)

    @staticmethod
    def _holder(fd: int) -> int | None:
        try:
            return int(os.pread(fd, 32, 0).decode().strip())
        except (OSError, ValueError):
            return None


def _same_file(fd: int, path: Path) -> bool:
    try:
        there = path.stat()
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (held.st_dev, held.st_ino) == (there.st_dev, there.st_ino)
