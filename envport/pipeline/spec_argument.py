"""What `envport translate` was given: a spec to read, or an environment to infer one for.

The argument is a spec whenever it names something that exists (an `envport.toml`, or a
directory holding one), exactly as before environments were accepted. Otherwise it is an
environment when it has an environment's shape: `gymnasium:Id`, `package.module:factory`,
or a bare id Gymnasium has registered. Anything else is one line saying what was expected.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from envport.errors import EnvportError
from envport.spec import SPEC_FILENAME, spec_path

# `package.module:factory`: dotted identifiers, a colon, an identifier.
_FACTORY = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*:[A-Za-z_]\w*")
# Gymnasium's id grammar (gymnasium.envs.registration): [namespace/]name[-vN].
_GYM_ID = re.compile(r"(?:[\w:-]+/)?[\w:.-]+?(?:-v\d+)?")
GYMNASIUM_PREFIX = "gymnasium:"


@dataclass(frozen=True)
class SpecArgument:
    """Exactly one of `spec` (a spec file) and `env` (an environment, as the user wrote it)."""

    spec: Path | None = None
    env: str | None = None


def _registered(name: str) -> bool:
    # Imported when needed: a spec path never pays for importing Gymnasium here.
    import gymnasium

    return name in gymnasium.envs.registry


def classify(text: str) -> SpecArgument:
    """A spec path or an environment; one clear line (exit 2) when it is neither."""
    if Path(text).exists():
        return SpecArgument(spec=spec_path(text))
    rest = text.removeprefix(GYMNASIUM_PREFIX)
    if text.startswith(GYMNASIUM_PREFIX) and rest and _GYM_ID.fullmatch(rest):
        return SpecArgument(env=text)
    if _FACTORY.fullmatch(text):
        return SpecArgument(env=text)
    if _GYM_ID.fullmatch(text) and _registered(text):
        return SpecArgument(env=text)
    raise EnvportError(
        f"{text}: no such spec file or directory, and not an environment; pass an "
        f"{SPEC_FILENAME} (or its directory), gymnasium:<EnvId>, a registered Gymnasium id, "
        "or package.module:factory"
    )


def infer_spec(env: str, directory: Path, target: str) -> Path:
    """Write the spec `envport init` infers for `env` into `directory`; its path.

    An environment init cannot read is its own one-line error (exit 2)."""
    try:
        from envport.init import write_spec  # type: ignore[import-not-found,unused-ignore]
    except ModuleNotFoundError as error:
        if error.name not in ("envport.init",):
            raise
        raise EnvportError(
            f"{env}: this envport cannot infer a spec (no `envport init`); write "
            f"{SPEC_FILENAME} by hand (docs/spec.md) and pass its path"
        ) from None
    written: Path = write_spec(env, directory, target)
    return written
