"""Which model a translate run uses when the user names none.

An example ships a replay session beside its spec (`examples/<name>/replay/<target>/`), so
the quickstart runs offline and free. That default applies only when no API key is set:
a user with a key should choose the model to spend it on, not find out from the bill.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from envport.errors import EnvportError
from envport.llm.replay import SESSION_FILE, read_session

KEY_ENVS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")


@dataclass(frozen=True)
class ModelChoice:
    spec: str  # "anthropic:claude-...", "openai:gpt-4o", "replay:/abs/dir"
    note: str | None = None  # said to the user when envport chose for them


def replay_dir(spec_file: Path, target: str) -> Path:
    return spec_file.parent / "replay" / target


def choose_model(model: str | None, spec_file: Path | None, target: str) -> ModelChoice:
    """The model a run uses. `spec_file` None: a spec inferred from an environment, which has
    no example directory and so no replay session to default to."""
    if model:
        if model.startswith("replay:"):
            # Absolute, so the cache key (which includes the name) survives a change of cwd.
            return ModelChoice(f"replay:{Path(model.removeprefix('replay:')).resolve()}")
        return ModelChoice(model)
    keys = [name for name in KEY_ENVS if os.environ.get(name)]
    session = replay_dir(spec_file, target) if spec_file is not None else None
    if not keys and session is not None and (session / SESSION_FILE).is_file():
        sources = {entry.source for entry in read_session(session).entries}
        kind = " and ".join(sorted(sources)) or "no"
        return ModelChoice(
            f"replay:{session.resolve()}",
            f"no --model and no API key: replaying the session {session} ({kind} answers); "
            "pass --model to use a live model",
        )
    if keys:
        raise EnvportError(
            f"no --model given; {keys[0]} is set, so choose the model to spend it on: "
            "--model anthropic:<model> or --model openai:<model>"
        )
    where = f"{session} has no replay session" if session else "an inferred spec has none"
    raise EnvportError(
        "no --model given and no API key set: pass --model anthropic:<model> (with "
        "ANTHROPIC_API_KEY), --model openai:<model> (with OPENAI_API_KEY, or --base-url for a "
        f"local server), or --model replay:<session dir>; {where}"
    )


def public_url(url: str | None) -> str | None:
    """A base URL fit to store in a run: credentials in it (user:pass@, ?key=) are dropped."""
    if not url:
        return None
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))
