"""What `envport init` cannot infer: one line naming it and what to write by hand."""

from __future__ import annotations

from envport.errors import EnvportError


class InitError(EnvportError):
    """The spec cannot be inferred (an unknown env, state that is not plain attributes, a
    spec already there); exit 2 with one line."""
