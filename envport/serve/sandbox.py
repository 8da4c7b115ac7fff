"""Limits on a port worker: what untrusted generated code may do, and what it may not.

What this is, honestly:
- OS limits (the boundary): address space, open files, no core dumps, CPU seconds per
  request (RLIMIT_CPU re-armed before each request), no new processes after lockdown (a
  seccomp filter, `no_fork`), a scratch working directory that is also TMPDIR and HOME,
  an environment of allowlisted variables only (`worker_env`), and no network: a fresh
  network namespace when `unshare(CLONE_NEWNET)` is allowed (root, or user namespaces), in
  which only a downed loopback exists; the worker talks to the verifier over a Unix
  socket, which a network namespace does not cut.
- A Python audit hook (defence in depth, not a boundary: native code can step around it):
  after lockdown it refuses process creation, network connections, and writes, renames
  and deletions outside the scratch directory.
"""

from __future__ import annotations

import ctypes
import os
import resource
import socket
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from envport.serve import no_fork
from envport.serve.answer_size import ANSWER_VALUES
from envport.serve.output import OUTPUT_BYTES

CLONE_NEWNET = 0x40000000
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_PROCESS_EVENTS = {
    "os.fork",
    "os.forkpty",
    "os.posix_spawn",
    "os.spawn",
    "os.exec",
    "os.system",
    "subprocess.Popen",
    "pty.spawn",
}
# Events whose first argument is a path the call changes; `dir_fd` (when the event carries
# one) is the position of a directory descriptor that path would be resolved against.
_PATH_EVENTS = {
    "os.remove": 1,
    "os.rmdir": 1,
    "os.mkdir": 2,
    "os.chmod": 2,
    "os.chown": 3,
    "os.truncate": None,
    "os.utime": 3,
    "shutil.rmtree": 1,
    "shutil.copyfile": None,
    "shutil.move": None,
}
# Events that create or move a name: the new name (second argument) is what gets changed;
# both names are checked, and any directory descriptor refused.
_TWO_PATH_EVENTS = {"os.rename", "os.replace", "os.link", "os.symlink"}
# libc functions that would do, behind the hook's back, what the hook refuses.
_LIBC_SYMBOLS = frozenset(
    [
        "open",
        "open64",
        "openat",
        "openat64",
        "creat",
        "creat64",
        "write",
        "pwrite",
        "writev",
        "unlink",
        "unlinkat",
        "rename",
        "renameat",
        "link",
        "linkat",
        "symlink",
        "symlinkat",
        "mkdir",
        "mkdirat",
        "rmdir",
        "truncate",
        "ftruncate",
        "chmod",
        "fork",
        "vfork",
        "clone",
        "execve",
        "execv",
        "execvp",
        "system",
        "popen",
        "posix_spawn",
        "socket",
        "connect",
        "syscall",
        "ptrace",
        "mprotect",
    ]
)


class Limits(BaseModel):
    memory_bytes: int = 8 << 30
    cpu_seconds_per_request: int = 300
    open_files: int = 512
    network: bool = False
    # The largest answer the driver takes from the worker (refused before it is read).
    answer_bytes: int = 1 << 30
    # The most values (lists, maps, numbers, strings, arrays) the driver decodes from one
    # answer (`envport.serve.answer_size`): msgpack's empty list is one byte, Python's 64.
    answer_values: int = ANSWER_VALUES
    # Bytes of the worker's stdout and stderr the driver keeps from the start and from the
    # end (`envport.serve.output`); what lies between is counted, not kept.
    output_bytes: int = OUTPUT_BYTES
    # The size of the worker's writable working directory (a tmpfs, inside bubblewrap).
    scratch_bytes: int = 1 << 30


@dataclass
class Applied:
    """What the OS granted, reported in `load` answers and the docs' terms."""

    network: str = "not limited"
    memory_bytes: int | None = None


def _set(limit: int, value: int) -> None:
    _, hard = resource.getrlimit(limit)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(limit, (value, hard))


def apply_process_limits(limits: Limits) -> Applied:
    applied = Applied()
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    _set(resource.RLIMIT_AS, limits.memory_bytes)
    applied.memory_bytes = limits.memory_bytes
    _set(resource.RLIMIT_NOFILE, limits.open_files)
    # Compiled bytecode would be written into the port's directory.
    sys.dont_write_bytecode = True
    if not limits.network:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.unshare(CLONE_NEWNET) == 0:
            applied.network = "network namespace (no interfaces up)"
        else:
            applied.network = "Python sockets refused by the audit hook (unshare not allowed)"
    return applied


@contextmanager
def cpu_budget(seconds: int) -> Iterator[None]:
    """CPU seconds for one request: RLIMIT_CPU is cumulative, so re-arm it from now."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    used = int(usage.ru_utime + usage.ru_stime) + 1
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    resource.setrlimit(resource.RLIMIT_CPU, (used + seconds, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_CPU, (resource.RLIM_INFINITY, hard))


class _Guard:
    def __init__(self, writable: list[Path]) -> None:
        self.writable = [str(p.resolve()) for p in writable]
        self.locked = False

    def _outside(self, path: Any) -> bool:
        if isinstance(path, int) or path is None:
            return False
        try:
            resolved = os.path.realpath(os.fsdecode(path))
        except (TypeError, ValueError):
            return True
        if resolved == os.devnull:
            return False
        return not any(
            resolved == root or resolved.startswith(root + os.sep) for root in self.writable
        )

    def _changes_outside(self, path: Any) -> bool:
        # A relative path may be resolved against a directory descriptor that the `open`
        # event does not show (os.open(name, dir_fd=fd)): only absolute names are judged.
        if isinstance(path, str | bytes) and not os.path.isabs(os.fsdecode(path)):
            return True
        return self._outside(path)

    def __call__(self, event: str, args: tuple) -> None:
        if not self.locked:
            return
        if event in _PROCESS_EVENTS:
            raise PermissionError(f"envport sandbox: {event} is not allowed in a port")
        if event == "import" and args and args[0] == "_posixsubprocess":
            raise PermissionError("envport sandbox: _posixsubprocess is not allowed in a port")
        if event == "socket.connect" or event == "socket.sendto":
            sock = args[0]
            if getattr(sock, "family", None) != socket.AF_UNIX:
                raise PermissionError("envport sandbox: network access is not allowed in a port")
        if event == "open":
            path, mode, flags = args
            writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                isinstance(flags, int) and flags & _WRITE_FLAGS
            )
            if writing and self._changes_outside(path):
                raise PermissionError(f"envport sandbox: writing {path} is not allowed")
        elif event in _PATH_EVENTS and args:
            at = _PATH_EVENTS[event]
            through_fd = at is not None and len(args) > at and args[at] not in (None, -1)
            if through_fd or self._changes_outside(args[0]):
                raise PermissionError(f"envport sandbox: {event} on {args[0]} is not allowed")
        elif event in _TWO_PATH_EVENTS:
            through_fd = any(a not in (None, -1) for a in args[2:] if isinstance(a, int))
            changed = args[1:2] if event == "os.symlink" else args[:2]
            if through_fd or any(self._changes_outside(a) for a in changed):
                raise PermissionError(f"envport sandbox: {event} outside the scratch directory")
        elif event == "ctypes.dlopen" and _is_libc(args[0] if args else None):
            raise PermissionError("envport sandbox: loading libc through ctypes is not allowed")
        elif event == "ctypes.dlsym" and len(args) > 1 and args[1] in _LIBC_SYMBOLS:
            raise PermissionError(f"envport sandbox: ctypes access to {args[1]} is not allowed")


def _is_libc(name: Any) -> bool:
    if name is None:
        return True  # CDLL(None): the process's own symbols, libc's among them
    base = os.path.basename(os.fsdecode(name))
    return base.startswith(("libc.", "libc-"))


def _disarm_posixsubprocess() -> None:
    """`_posixsubprocess.fork_exec` starts a process without an audit event: replace it in
    the loaded module (a fresh import is refused by the hook)."""
    import _posixsubprocess

    def refused(*_args: Any, **_kwargs: Any) -> Any:
        raise PermissionError("envport sandbox: _posixsubprocess is not allowed in a port")

    _posixsubprocess.fork_exec = refused


_GUARD: _Guard | None = None


def install_guard(writable: list[Path]) -> None:
    """Install the audit hook (inactive until `lockdown`). Audit hooks cannot be removed."""
    global _GUARD
    if _GUARD is None:
        _GUARD = _Guard(writable)
        sys.addaudithook(_GUARD)


def allow_writes(directory: Path) -> None:
    """Before lockdown: one more directory the port may write (its compilation cache)."""
    if _GUARD is not None and not _GUARD.locked:
        _GUARD.writable.append(str(directory.resolve()))


def lockdown() -> None:
    """From here on, the port's code runs: refuse what a port has no business doing."""
    global PROCESSES
    if _GUARD is not None:
        # The OS's refusal of new processes, for native code the audit hook cannot see.
        PROCESSES = no_fork.refuse_new_processes()
        _disarm_posixsubprocess()
        _GUARD.locked = True


# How new processes are limited, once `lockdown` ran (reported in the load answer).
PROCESSES = "not limited (before lockdown)"
