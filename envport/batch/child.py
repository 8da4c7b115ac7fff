"""One run of a batch: `envport translate` or `envport resume` that dies with its batch.

Started by the batch as `python -m envport.batch.child <envport arguments>`. On Linux the
kernel kills it when the batch process dies (PR_SET_PDEATHSIG), however the batch ends:
an orphaned run would keep its lock and race the batch that is started to continue.
Being killed is safe: a run resumes from its last completed step without paying twice.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

from envport.errors import EXIT_INTERRUPTED

PARENT_ENV = "ENVPORT_BATCH_PARENT"
PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    if not sys.platform.startswith("linux"):
        return  # elsewhere a killed batch can leave a run going; its lock says so
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        return
    expected = os.environ.get(PARENT_ENV)
    # The batch may have died before the request above took effect.
    if expected and os.getppid() != int(expected):
        os._exit(EXIT_INTERRUPTED)


def main() -> None:
    die_with_parent()
    from envport import interrupts

    # From the first moment, as `python -m envport` does: the batch's SIGINT may come while
    # this process is still loading envport, and it must end with 130 all the same.
    interrupts.install(repeat=True)
    from envport.cli import main as envport_main

    raise SystemExit(envport_main(sys.argv[1:]))


if __name__ == "__main__":
    main()
