"""Errors of model calls, as one line a user can act on, with secrets scrubbed."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from envport.errors import EXIT_USAGE, EnvportError

if TYPE_CHECKING:
    from envport.llm.charges import Charge

MAX_DETAIL_CHARS = 300
REDACTED = "[REDACTED]"


class ModelCallError(EnvportError):
    """A model call failed for good: refused (4xx) or still failing after every retry.

    Exit code 2: the user has to act (fix the key, the model name, the base URL, or retry
    later), nothing was learned about the port.
    """

    def __init__(
        self, message: str, *, status: int | None = None, attempts: int = 1, transient: bool
    ) -> None:
        super().__init__(message, exit_code=EXIT_USAGE)
        self.status = status
        self.attempts = attempts
        self.transient = transient


class MalformedResponse(Exception):
    """The server answered 2xx with a body that is not a usable completion; transient.

    `charge` is what the rejected answer is counted at in the ledger (its reported usage,
    or the request's worst case when the usage itself cannot be trusted); None when the
    body is not a completion at all.
    """

    def __init__(self, reason: str, charge: Charge | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.charge = charge


class DeadlineExceeded(Exception):
    """One attempt took longer than the call's total deadline (a server trickling bytes or
    saying nothing); transient, like the SDK's own timeouts."""


MIN_SECRET_CHARS = 8


def redact(text: str, secrets: Iterable[str | None]) -> str:
    """Replace every secret (and its 8+ character tails, as servers echo masked keys) in text.

    Strings shorter than 8 characters are left alone: no real API key is that short, and
    scrubbing a placeholder like "k" would garble every word that contains the letter.
    """
    for secret in secrets:
        if not secret or len(secret) < MIN_SECRET_CHARS:
            continue
        text = text.replace(secret, REDACTED)
        # "sk-...SECRET-123" style echoes keep a suffix; a long suffix still identifies the key.
        if len(secret) >= 16:
            text = text.replace(secret[-8:], REDACTED)
    return text


# C0 controls, DEL and C1 controls: what a terminal acts on (colours, cursor moves, window
# titles, and through OSC 52 even the clipboard). U+009B alone is a CSI on many terminals.
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_CONTROLS_BUT_LINES = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _escaped(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group()):02x}"


def printable(text: str, *, multiline: bool = False) -> str:
    """Server text made inert: every control character becomes a visible `\\x1b`-style escape.

    Applied where server text enters envport (answers, error bodies, reported names), so an
    escape sequence cannot recolour or retitle a terminal, nor sit raw in run.json, the
    transcript or the next prompt. `multiline` keeps newline and tab (an answer is code);
    CRLF becomes LF first, so Windows line ends do not turn into visible escapes.
    """
    if multiline:
        return _CONTROLS_BUT_LINES.sub(_escaped, text.replace("\r\n", "\n"))
    return _CONTROLS.sub(_escaped, text)


def one_line(text: str, secrets: Iterable[str | None] = ()) -> str:
    """Collapse whitespace, scrub secrets, escape controls, and cut to a terminal line."""
    flat = printable(re.sub(r"\s+", " ", redact(str(text), secrets)).strip())
    if len(flat) > MAX_DETAIL_CHARS:
        flat = flat[: MAX_DETAIL_CHARS - 3] + "..."
    return flat
