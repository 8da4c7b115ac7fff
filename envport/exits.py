"""How a command ends: an error a user can act on as one line and its exit code, and an
interrupt that came before the command took charge as the line that says what to do.

Shared by the command line (`envport.cli`) and a batch's runs (`envport.batch.child`), which
run translate and resume without going through the command line.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
from collections.abc import Callable, Sequence

from envport import interrupts
from envport.errors import EnvportError
from envport.io.inert import say


def finish(body: Callable[[], int], words: Sequence[str], *, own_signals: bool) -> int:
    """Run a command's `body`, turning what escapes it into one line on stderr and an exit
    code. `words`: the command line, to say how to start again; `own_signals`: this process
    handles its own signals (it was not called by another envport command in-process)."""
    try:
        return int(body())
    except EnvportError as error:
        say(f"envport: {error}")
        return error.exit_code
    except KeyboardInterrupt as interrupt:
        # Here only when the command had not taken charge (a run it started says how to
        # continue it): still starting up, or a command without a run.
        signum = getattr(interrupt, "signum", None)
        if own_signals:
            interrupts.decided()
        print(
            f"envport: {interrupts.describe(signum)}{interrupts.before_start(list(words))}",
            file=sys.stderr,
        )
        return interrupts.exit_code(signum)


def leave(code: int) -> int:
    """The process's own ending. After an interrupt there is nothing left to save (the run
    state, the journal and the git history are written before the resume line is printed),
    and interpreter teardown can then abort in an extension's thread (seen once in 20
    SIGINTs: "PyThreadState_Get ... finalizing", exit -6 instead of 130), so the process
    ends at once with its code, as a port worker does. Any other code returns normally,
    its heap frozen: the interpreter's teardown collected everything the command had built
    (Hypothesis's examples, coverage's data) once more, a quarter of a second of CartPole's
    three-second verify. Objects freed by their last reference are still finalized; only
    the cycles left at exit are not collected, which the process's end frees anyway."""
    if code in (interrupts.exit_code(signal.SIGINT), interrupts.exit_code(signal.SIGTERM)):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    gc.freeze()
    return code
