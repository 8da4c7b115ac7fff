"""The OS boundary around every process that runs generated code: bubblewrap.

A port worker runs inside `bwrap` with
- a root of its own, read-only, holding only what the driver names from its own
  knowledge: /usr (and the top-level links into it), a few files of /etc (the loader's,
  the compiler's, user lookups; not /etc/shadow), the Python installation, site-packages
  and envport's package, for a worker that builds a crate the Rust toolchain's own
  directory (never cargo's or rustup's homes), and what the caller names (the port, the
  spec's folder, the probes file, the shared build cache), never a path found in a
  request's text; writable only its working directory (a tmpfs of a given size, or the
  scratch directory of a build worker), what the caller names writable (a JAX port's own
  compilation cache, `compile_cache`) and 1 MiB tmpfs at /tmp, /var/tmp, /run, /dev/shm;
- its own user namespace, as nobody with no capabilities, and no nested one;
- its own PID namespace and /proc: no other process, the driver's included, is visible, so
  nothing reads the driver's environment (`/proc/<pid>/environ`) or memory;
- its own network, IPC and UTS namespaces: no network at all; the channel to the verifier
  is a Unix socket file in the scratch directory, which a network namespace does not cut;
- a session of its own (the user's Ctrl-C reaches the driver, which alone decides what it
  means), and death with its starter.

Without bubblewrap, untrusted code is refused unless the user asked for
`--unsafe-no-sandbox`, which says once that the boundary is gone.
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from envport.errors import EnvportError
from envport.serve import toolchain

# Set in a process (and inherited by the processes it starts) when the user passed
# --unsafe-no-sandbox: a batch's child runs carry the choice with them.
UNSAFE_VARIABLE = "ENVPORT_UNSAFE_NO_SANDBOX"
# Empty tmpfs in the worker: places programs expect to exist and to write to.
_HIDDEN = ("/tmp", "/var/tmp", "/run", "/dev/shm")
# The worker's working directory when its size is limited: a tmpfs of its own, apart from
# /tmp, so the audit hook's "only the working directory" still refuses /tmp's names.
WORK = "/envport-work"
# The size of the others: room for a lock file, not for filling memory.
_SMALL_TMPFS = 1 << 20
# The user and group a worker runs as inside its user namespace: nobody.
SANDBOX_ID = 65534
# Top-level system directories (links into /usr on a merged-/usr system).
_SYSTEM_DIRS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
# What the dynamic loader, the C compiler (a Rust crate's linker) and user lookups read.
_ETC_ENTRIES = (
    "alternatives",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
    "nsswitch.conf",
    "passwd",
    "group",
    "os-release",
)

_warned = False


class SandboxUnavailable(EnvportError):
    """Generated code would run without isolation and the user did not agree to that."""


def allow_unsandboxed() -> None:
    """The user passed --unsafe-no-sandbox: run generated code without the boundary."""
    os.environ[UNSAFE_VARIABLE] = "1"


def _unsafe_allowed() -> bool:
    return os.environ.get(UNSAFE_VARIABLE) == "1"


@functools.cache
def _bwrap_problem() -> str | None:
    """Why bubblewrap cannot isolate a worker here, or None when it can (tried once)."""
    found = shutil.which("bwrap")
    if found is None:
        return "bubblewrap (`bwrap`) is not installed"
    probe = [found, "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev"]
    probe += ["--unshare-pid", "--unshare-net", "--die-with-parent", "--", "true"]
    try:
        done = subprocess.run(probe, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError) as error:
        return f"bubblewrap does not start: {error}"
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or ["no reason given"])[-1]
        return f"bubblewrap cannot create namespaces here ({why})"
    return None


def available() -> bool:
    return _bwrap_problem() is None


def _existing(paths: Iterable[Path | str]) -> list[str]:
    found: dict[str, None] = {}
    for path in paths:
        text = os.path.abspath(os.fspath(path))
        for candidate in (text, os.path.realpath(text)):
            if os.path.exists(candidate):
                found.setdefault(candidate, None)
    return list(found)


def _interpreter_paths() -> list[str]:
    """What the worker's Python needs to start and import envport, numpy, jax, gymnasium:
    the installation (standard library), the environment's site-packages, envport's own
    package, and the directories of PYTHONPATH. Taken from this process's own installation,
    never from a request's text, and not `sys.path` whole (it holds the working directory
    under `python -m`)."""
    import site

    import envport

    paths: list[str | Path] = [sys.prefix, sys.base_prefix, sys.exec_prefix]
    paths += [Path(sys.executable).parent, Path(os.path.realpath(sys.executable)).parent]
    paths += site.getsitepackages()
    # The user's own import path for this interpreter (a worker inherits PYTHONPATH).
    paths += [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if os.path.isabs(p)]
    paths.append(Path(envport.__file__).resolve().parent)
    return _existing(paths)


def _system_root() -> list[str]:
    """The operating system a worker sees: programs and libraries under /usr (and the
    top-level links into it), and the few files under /etc that the loader, the C compiler
    and name lookups read. Not the rest of /etc (/etc/shadow), not /root, /home, /srv."""
    arguments = ["--ro-bind", "/usr", "/usr"]
    for name in _SYSTEM_DIRS:
        path = "/" + name
        if os.path.islink(path):
            arguments += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            arguments += ["--ro-bind", path, path]
    for name in _ETC_ENTRIES:
        path = "/etc/" + name
        if os.path.exists(path):
            arguments += ["--ro-bind", path, path]
    return arguments


def mounts(
    scratch: Path | None,
    readable: Iterable[Path | str] = (),
    writable: Iterable[Path | str] = (),
    rust: bool = False,
) -> tuple[list[str], list[str]]:
    """The paths a worker reads and the paths it writes: all from the driver's own
    knowledge (its Python, for a Rust build the toolchain, what the caller names), never
    from request text."""
    compiler = toolchain.rust().roots if rust else ()
    seen = _existing([*_interpreter_paths(), *compiler, *readable])
    changed = [d for d in [scratch, *writable] if d is not None]
    for directory in changed:
        os.makedirs(directory, exist_ok=True)
    return seen, [str(Path(d).resolve()) for d in changed]


def command_line(
    command: list[str],
    scratch: Path | None,
    readable: Iterable[Path | str] = (),
    writable: Iterable[Path | str] = (),
    work_bytes: int | None = None,
    rust: bool = False,
    work_dir: str = WORK,
) -> list[str]:
    """`command` wrapped to run inside the sandbox, or as is under --unsafe-no-sandbox.

    `readable`: paths the worker reads (the port, harness files); `writable`: paths it may
    change besides `scratch` (created if missing). The caller names them from what it
    knows; nothing else of the machine is visible. `work_bytes`: the worker works in a
    tmpfs of that size at `work_dir` (its working directory, HOME and TMPDIR), and
    `scratch`, which then holds only the channel, is read-only (None: not there at all);
    without it, `scratch` is the writable working directory (a build worker's, whose
    output the driver takes from there). `rust`: the worker builds a crate, so it sees the
    Rust toolchain's own directory (`toolchain`); no other worker does."""
    problem = _bwrap_problem()
    if problem is not None:
        if not _unsafe_allowed():
            raise SandboxUnavailable(
                f"{problem}; generated code runs only inside it: install it "
                "(`apt-get install bubblewrap`) or pass --unsafe-no-sandbox to run the port "
                "without isolation"
            )
        _warn_once(problem)
        return command
    if scratch is None and work_bytes is None:
        raise ValueError("a worker without a scratch directory needs a sized tmpfs")
    seen, changed = mounts(scratch, readable, writable, rust)
    arguments = ["bwrap", *_system_root(), "--dev", "/dev", "--proc", "/proc"]
    for root in _HIDDEN:
        # Writable places a program may expect: room for a lock file, not for filling memory.
        arguments += ["--size", str(_SMALL_TMPFS), "--tmpfs", root]
    if work_bytes is not None:
        arguments += ["--size", str(work_bytes), "--tmpfs", work_dir]
    # Parents before children, so a later mount never hides an earlier one.
    for path in sorted(seen, key=lambda p: p.count("/")):
        arguments += ["--ro-bind", path, path]
    for directory in sorted(changed, key=lambda p: p.count("/")):
        read_only = work_bytes is not None and scratch is not None and directory == changed[0]
        arguments += ["--ro-bind" if read_only else "--bind", directory, directory]
    # The sandbox's own root and /dev are tmpfs too: nothing may be written there.
    arguments += ["--remount-ro", "/dev", "--remount-ro", "/"]
    # A user namespace of its own, as an unprivileged user: no capability anywhere, and
    # no further namespaces (the kernel's user-namespace code is a large attack surface).
    arguments += ["--unshare-user", "--uid", str(SANDBOX_ID), "--gid", str(SANDBOX_ID)]
    arguments += ["--disable-userns"]
    arguments += ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts"]
    arguments += ["--unshare-cgroup-try", "--die-with-parent", "--new-session"]
    workdir = work_dir if work_bytes is not None else str(scratch)
    # Programs write their caches and temporary files under HOME and TMPDIR: the scratch.
    arguments += ["--setenv", "TMPDIR", workdir, "--setenv", "HOME", workdir]
    arguments += ["--cap-drop", "ALL", "--chdir", workdir, "--"]
    return [shutil.which("bwrap") or "bwrap", *arguments[1:], *command]


def _warn_once(problem: str) -> None:
    global _warned
    if not _warned:
        _warned = True
        print(
            f"envport: WARNING: {problem}; --unsafe-no-sandbox: generated code runs with this "
            "user's full access to files, processes and the network",
            file=sys.stderr,
        )


def exit_note(returncode: int) -> str:
    """How a sandboxed process ended. bwrap reports a child killed by signal N as 128+N."""
    if returncode < 0:
        return _signal_note(-returncode)
    if returncode > 128 and available():
        return _signal_note(returncode - 128)
    return f"exit code {returncode}"


def _signal_note(number: int) -> str:
    if number == signal.SIGXCPU:
        # The sandbox's RLIMIT_CPU: one request used its CPU seconds (Limits).
        return f"killed by signal {number} (SIGXCPU: past its CPU seconds for one request)"
    return f"killed by signal {number}"
