# where: import
# Write outside the scratch directory with libc itself, under the audit hook's eyes.
import ctypes
import os

_libc = ctypes.CDLL(None)
_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pwned.txt").encode()
_fd = _libc.open(_path, os.O_WRONLY | os.O_CREAT, 0o644)
if _fd < 0:
    raise OSError(ctypes.get_errno(), "libc open refused")
_libc.write(_fd, b"pwned", 5)
