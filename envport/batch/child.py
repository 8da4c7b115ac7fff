"""One run of a batch: `envport translate` or `envport resume` that dies with its batch.

Started by the batch as `python -m envport.batch.child`, with the run's options (the one
options model, envport.runs.options) as JSON on its stdin: never flags to parse back, and
nothing (a base URL may hold credentials) on a command line other users can list. On Linux
the kernel kills it when the batch process dies (PR_SET_PDEATHSIG), however the batch ends:
an orphaned run would keep its lock and race the batch that is started to continue. Being
killed is safe: a run resumes from its last completed step without paying twice.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
from typing import Annotated

from pydantic import Field, TypeAdapter

from envport.errors import EXIT_INTERRUPTED
from envport.runs.options import RunOptions

PARENT_ENV = "ENVPORT_BATCH_PARENT"
PR_SET_PDEATHSIG = 1

# The options of a translate or a resume, told apart by their `command`.
_ORDER: TypeAdapter[RunOptions] = TypeAdapter(Annotated[RunOptions, Field(discriminator="command")])


def order_json(options: RunOptions) -> str:
    """The options as the child reads them: only what was given is set (see
    envport.runs.options), and the command always."""
    given = options.model_dump(mode="json", exclude_unset=True)
    return json.dumps({**given, "command": options.command})


def read_order(text: str | bytes) -> RunOptions:
    return _ORDER.validate_json(text)


def hand_over(process: subprocess.Popen[bytes], options: RunOptions) -> None:
    """Give a started child its options, and its stdin's end."""
    assert process.stdin is not None
    try:
        process.stdin.write(order_json(options).encode())
        process.stdin.close()
    except BrokenPipeError:
        pass  # it died first (its batch was going); its exit code says how it ended


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
    from envport import heap
    from envport.exits import finish, leave
    from envport.pipeline.command import command_words, run

    heap.collect_in_batches()

    words: list[str] = []  # filled once the options are read, for a message about them

    def body() -> int:
        options = read_order(sys.stdin.buffer.read())
        words.extend(command_words(options))
        return run(options)

    raise SystemExit(leave(finish(body, words, own_signals=False)))


if __name__ == "__main__":
    main()
