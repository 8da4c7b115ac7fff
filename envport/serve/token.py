"""The shared secret a client of `envport serve` shows with every request.

The server's socket takes requests from anyone who can reach its address, and each request
runs a port (or the reference) on the server's machine: without a token any local user, or
anyone on the network for a tcp:// address, could drive it. The token travels from the
environment (`ENVPORT_SERVE_TOKEN`) or a file, never on a command line, where any user on
the machine can read it in the process list. No worker sees it: a worker's environment
holds no variable whose name has TOKEN.
"""

from __future__ import annotations

import hmac
import os
import secrets
from pathlib import Path

from envport.errors import EnvportError

TOKEN_VARIABLE = "ENVPORT_SERVE_TOKEN"
MIN_TOKEN_CHARS = 16


def _checked(token: str, source: str) -> str:
    token = token.strip()
    if len(token) < MIN_TOKEN_CHARS:
        raise EnvportError(
            f"{source}: the serve token must be at least {MIN_TOKEN_CHARS} characters "
            f"(leave {TOKEN_VARIABLE} unset and `envport serve` makes one)"
        )
    return token


def server_token() -> tuple[str, bool]:
    """The token `envport serve` requires, and whether it made it (then it prints it once)."""
    given = os.environ.get(TOKEN_VARIABLE)
    if given:
        return _checked(given, TOKEN_VARIABLE), False
    return secrets.token_urlsafe(32), True


def client_token(file: Path | None = None) -> str:
    """The token a client sends: from `file` if given, else the environment; empty when
    neither has one (the server then refuses, saying so)."""
    if file is not None:
        try:
            return _checked(file.read_text(encoding="utf-8"), str(file))
        except (OSError, UnicodeDecodeError) as error:
            raise EnvportError(f"{file}: cannot read the serve token: {error}") from None
    given = os.environ.get(TOKEN_VARIABLE, "")
    return _checked(given, TOKEN_VARIABLE) if given else ""


def matches(shown: str, token: str) -> bool:
    """Whether a request's token is the server's, in time that does not tell how much of it
    was right."""
    return hmac.compare_digest(shown.encode("utf-8"), token.encode("utf-8"))
