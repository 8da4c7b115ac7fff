"""Errors a user can act on: one line, an exit code, no traceback."""

from __future__ import annotations

EXIT_OK = 0
EXIT_DIVERGED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # Ctrl-C (SIGINT)
EXIT_TERMINATED = 143  # SIGTERM


class EnvportError(Exception):
    """An error whose message is shown to the user as one line.

    `exit_code` is 2 for usage and spec errors (the user must change the command or the
    file) and 1 for failures of the thing being checked.
    """

    def __init__(self, message: str, exit_code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class SpecError(EnvportError):
    """The spec file is missing, unreadable or invalid."""


class PortError(EnvportError):
    """The port could not be loaded or answered with an error; a failed check, exit 1."""

    def __init__(self, message: str, detail: str = "") -> None:
        super().__init__(message, exit_code=EXIT_DIVERGED)
        # What the port itself said (a Rust panic's text, the traceback's frames in the
        # port): for a report that shows the crash, not for the one-line message.
        self.detail = detail


class PortRaised(PortError):
    """The port's own code raised while answering one request, and said so: its worker is
    alive and answers the next request. A check that meets it fails on the input that made
    the port raise, and the other checks still run; a worker that died or hung is the plain
    `PortError` that ends the verify."""
