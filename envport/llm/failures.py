"""Errors of model calls, as one line a user can act on, with secrets scrubbed."""

from __future__ import annotations

import re
from collections.abc import Iterable

from envport.errors import EXIT_USAGE, EnvportError

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
    """The server answered 2xx with a body that is not a completion; treated as transient."""


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


def one_line(text: str, secrets: Iterable[str | None] = ()) -> str:
    """Collapse whitespace, scrub secrets, and cut to a length that fits a terminal line."""
    flat = re.sub(r"\s+", " ", redact(str(text), secrets)).strip()
    if len(flat) > MAX_DETAIL_CHARS:
        flat = flat[: MAX_DETAIL_CHARS - 3] + "..."
    return flat
