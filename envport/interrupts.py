"""Ctrl-C and SIGTERM: the user's request to stop is remembered, and never lost.

Python raises KeyboardInterrupt wherever the main thread happens to be. Inside a finaliser
(a zmq socket's `__del__`, a gc callback hypothesis installs) it cannot propagate: Python
prints "Exception ignored ... KeyboardInterrupt" and carries on as if nothing had happened.
Here the signal is recorded before anything is raised; an interrupt lost in a finaliser is
raised again as soon as the finaliser returns, and code about to record a result (a check's
verdict) calls `check()` first, so work cut short by an interrupt is never taken for one.

SIGINT exits 130 and SIGTERM 143 (128 + the signal's number, the shell's convention); both
stop a run the same way. Only the driver decides what a signal means: port workers run in
sessions of their own, so a terminal's Ctrl-C reaches the driver alone.
"""

from __future__ import annotations

import _thread
import shlex
import signal
import sys
import threading
import time
from typing import Any

HANDLED = (signal.SIGINT, signal.SIGTERM)
# A repeated signal within this long of the first is the same request (a second Ctrl-C, a
# forwarded copy): the run is already stopping, and raising again would cut its clean-up
# short. Later than this, the stop may be stuck: the signal is raised again.
REPEAT_AFTER_S = 10.0
REARM_AFTER_S = 0.005


class Interrupted(KeyboardInterrupt):
    """The user asked envport to stop (Ctrl-C or SIGTERM)."""

    def __init__(self, signum: int = signal.SIGINT) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return exit_code(self.signum)


class _State:
    received: int | None = None
    at: float = 0.0
    rearming = False
    in_hook = False  # inside the unraisable hook: an interrupt raised here would be lost
    repeat = False
    decided = False
    previous_hook: Any = None


_state = _State()


def exit_code(signum: int | None) -> int:
    return 128 + (signum or signal.SIGINT)


def received() -> int | None:
    """The signal that asked this process to stop, if one did."""
    return _state.received


def check() -> None:
    """Raise the interrupt now if one arrived (and something swallowed it on the way)."""
    if _state.received is not None:
        raise Interrupted(_state.received)


def decided() -> None:
    """The command's outcome is settled: a signal from now on is too late to change it.

    Ignored, not merely left unhandled: while Python shuts down it puts the default action
    back, and a signal then would end a finished run by SIGINT instead of its exit code.
    """
    _state.decided = True
    if threading.current_thread() is threading.main_thread():
        for signum in HANDLED:
            signal.signal(signum, signal.SIG_IGN)


def describe(signum: int | None) -> str:
    """What stopped the process, as a run's reason and its closing line say it."""
    return "interrupted by the user" if signum in (None, signal.SIGINT) else "stopped by SIGTERM"


def before_start(words: list[str]) -> str:
    """What to add when a command line was stopped before its command took charge."""
    if words[:1] == ["resume"]:
        return f"; continue with: envport {shlex.join(words)}"  # the same command, again
    if words[:1] == ["translate"]:
        return " before the run began; nothing was saved"
    return ""


def _handler(signum: int, frame: object) -> None:
    state = _state
    if state.decided or state.in_hook:
        return  # in the hook, the rearming thread raises it once the hook has returned
    if state.rearming:
        state.rearming = False
        raise Interrupted(state.received or signum)
    repeated = state.received is not None and time.monotonic() - state.at < REPEAT_AFTER_S
    if repeated and not state.repeat:
        return
    if state.received is None:
        state.received, state.at = signum, time.monotonic()
    raise Interrupted(state.received)


def _unraisable(unraisable: Any) -> None:
    if isinstance(unraisable.exc_value, KeyboardInterrupt) and _state.received is not None:
        # Raised inside a finaliser: raise it again in the main thread once that returns.
        # From another thread and a moment later: a signal tripped here would be handled
        # inside this hook, where it would be lost again.
        # The thread waits for the hook to return: on a loaded machine the hook can still be
        # starting it (Thread.start waits for the thread) when REARM_AFTER_S has passed.
        _state.in_hook = _state.rearming = True
        threading.Thread(target=_rearm, args=(_state.received,), daemon=True).start()
        _state.in_hook = False
        return
    (_state.previous_hook or sys.__unraisablehook__)(unraisable)


def _rearm(signum: int) -> None:
    time.sleep(REARM_AFTER_S)
    while _state.in_hook:
        time.sleep(REARM_AFTER_S)
    _thread.interrupt_main(signal.Signals(signum))


def settle_in(loop: Any) -> None:
    """An asyncio loop reports no task an interrupt went through: the interrupt surfaced
    where the loop was run, and is handled there. (Raised while a side task such as the lag
    monitor ran, it would otherwise print "Task exception was never retrieved".)"""

    def handle(loop: Any, context: dict[str, Any]) -> None:
        if not isinstance(context.get("exception"), KeyboardInterrupt):
            loop.default_exception_handler(context)

    loop.set_exception_handler(handle)


def install(*, repeat: bool = False) -> None:
    """Handle SIGINT and SIGTERM in this process (main thread only; idempotent).

    With `repeat`, every signal raises (the batch: a second Ctrl-C stops its waiting).
    """
    if threading.current_thread() is not threading.main_thread():
        return
    _state.repeat = repeat
    for signum in HANDLED:
        signal.signal(signum, _handler)
    if sys.unraisablehook is not _unraisable:
        _state.previous_hook = sys.unraisablehook
        sys.unraisablehook = _unraisable
