"""A seccomp filter that refuses new processes: the worker's process-count limit.

RLIMIT_NPROC cannot do this: it counts every process of the real user, and does not apply
to root at all. After lockdown a worker may start threads (JAX's, zmq's) but no process:
fork, vfork and clone without CLONE_THREAD fail with EPERM (clone3 with ENOSYS, so a C
library falls back to clone, which is judged by its flags); a system call of another ABI
(32-bit, x32), which could name fork by another number, fails too. Applied to every
thread of the process at once (TSYNC), and kept by whatever the worker executes.
"""

from __future__ import annotations

import ctypes
import errno
import platform
import struct

_ARCHES = {
    # machine: (audit arch, process-creating calls refused outright, clone, clone3, seccomp)
    "x86_64": (0xC000003E, (57, 58), 56, 435, 317),
    "aarch64": (0xC00000B7, (), 220, 435, 277),
}
_CLONE_THREAD = 0x00010000
_X32_BIT = 0x40000000
_PR_SET_NO_NEW_PRIVS = 38
_SECCOMP_SET_MODE_FILTER = 1
_SECCOMP_FILTER_FLAG_TSYNC = 1
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000
# BPF opcodes: load a word of the seccomp data; jump if equal / greater-or-equal / bits set.
_LD, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]


def _assemble(machine: str) -> bytes:
    arch, refused, clone, clone3, _ = _ARCHES[machine]
    steps: list[tuple] = [("ld", 4), ("jeq", arch, "next", "deny"), ("ld", 0)]
    steps.append(("jge", _X32_BIT, "deny", "next"))
    steps += [("jeq", number, "deny", "next") for number in refused]
    steps += [("jeq", clone3, "nosys", "next"), ("jeq", clone, "next", "allow")]
    steps += [("ld", 16), ("jset", _CLONE_THREAD, "allow", "deny")]
    ends = {"allow": len(steps), "deny": len(steps) + 1, "nosys": len(steps) + 2}
    code = b""
    for index, step in enumerate(steps):
        if step[0] == "ld":
            code += struct.pack("HBBI", _LD, 0, 0, step[1])
            continue
        op = {"jeq": _JEQ, "jge": _JGE, "jset": _JSET}[step[0]]
        hops = [0 if t == "next" else ends[t] - index - 1 for t in step[2:]]
        code += struct.pack("HBBI", op, hops[0], hops[1], step[1])
    code += struct.pack("HBBI", _RET, 0, 0, _ALLOW)
    code += struct.pack("HBBI", _RET, 0, 0, _ERRNO | errno.EPERM)
    code += struct.pack("HBBI", _RET, 0, 0, _ERRNO | errno.ENOSYS)
    return code


def refuse_new_processes() -> str:
    """Install the filter; what was done, in the `load` answer's words."""
    machine = platform.machine()
    if machine not in _ARCHES:
        return f"not limited (no filter for {machine})"
    code = _assemble(machine)
    buffer = ctypes.create_string_buffer(code, len(code))
    program = _Program(len(code) // 8, ctypes.cast(buffer, ctypes.c_char_p))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return "not limited (no_new_privs refused)"
    done = libc.syscall(
        _ARCHES[machine][4],
        _SECCOMP_SET_MODE_FILTER,
        _SECCOMP_FILTER_FLAG_TSYNC,
        ctypes.byref(program),
    )
    if done != 0:
        return f"not limited (seccomp refused: errno {ctypes.get_errno()})"
    return "no new processes (seccomp)"
