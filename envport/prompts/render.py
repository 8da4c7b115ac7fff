"""Rendering the prompt templates (jinja2 `*.j2` files in this package, or a user's directory).

A user's `--prompts DIR` overrides templates by file name and falls back to the shipped ones
for the rest, so one can change the repair prompt without copying the others. Templates see
plain data (dicts, lists, strings, the spec's pydantic models); they never call back into
envport. Undefined names are errors, so a typo in an override fails loudly at once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2

from envport.errors import EnvportError
from envport.io.inert import code_block

TEMPLATES = (
    "system.j2",
    "context.j2",
    "generate.j2",
    "repair.j2",
    "plan.j2",
    "reask.j2",
    "answer_format.j2",
    "answer_edits.j2",
    "target_jax.j2",
    "target_numpy.j2",
    "target_rust.j2",
    "optimize.j2",
    "optimize_jax.j2",
    "optimize_numpy.j2",
    "optimize_rust.j2",
)


class Prompts:
    """The templates of one run; `directory` (optional) overrides the shipped ones."""

    def __init__(self, directory: Path | str | None = None) -> None:
        self.directory = Path(directory) if directory is not None else None
        loaders: list[jinja2.BaseLoader] = []
        if self.directory is not None:
            if not self.directory.is_dir():
                raise EnvportError(
                    f"--prompts {self.directory}: no such directory; pass a directory of .j2 "
                    f"templates named like the shipped ones ({', '.join(TEMPLATES[:6])})"
                )
            loaders.append(jinja2.FileSystemLoader(str(self.directory)))
        loaders.append(jinja2.PackageLoader("envport", "prompts"))
        self.env = jinja2.Environment(
            loader=jinja2.ChoiceLoader(loaders),
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
            keep_trailing_newline=False,
            autoescape=False,
        )
        # A divergence quotes the port: its block's fence is longer than any backtick run in
        # it, so the port's text cannot close the block and write the prompt's own sections.
        self.env.filters["code_block"] = code_block

    def render(self, name: str, **context: Any) -> str:
        """One template rendered, with runs of blank lines squeezed to one."""
        try:
            text = self.env.get_template(name).render(**context)
        except jinja2.TemplateNotFound as error:
            raise EnvportError(f"prompt template {error.name} not found") from None
        except jinja2.TemplateError as error:
            where = getattr(error, "lineno", None)
            location = f"{name}:{where}" if where else name
            raise EnvportError(f"prompt template {location}: {error}") from None
        return _squeeze(text).strip() + "\n"

    def origin(self, name: str) -> str:
        """Where a template comes from: the override directory or the package."""
        if self.directory is not None and (self.directory / name).is_file():
            return str(self.directory / name)
        return f"envport/prompts/{name}"


def _squeeze(text: str) -> str:
    # Conditional sections leave blank runs behind; prompts read better without them.
    # Code blocks keep theirs: a blank run inside a fence is part of a file.
    out: list[str] = []
    blank = 0
    fence: str | None = None
    for line in text.splitlines():
        stripped = line.lstrip()
        if stripped.startswith(("```", "~~~")):
            marker = stripped[: len(stripped) - len(stripped.lstrip(stripped[0]))]
            if fence is None:
                fence = marker
            elif stripped.rstrip() == fence or (
                stripped.rstrip() == marker and len(marker) >= len(fence)
            ):
                fence = None
        if fence is None and not line.strip():
            blank += 1
            if blank > 1:
                continue
        else:
            blank = 0
        out.append(line.rstrip() if fence is None else line)
    return "\n".join(out)


def normalise_files(files: dict[str, str]) -> dict[str, str]:
    """File texts ending in exactly one newline, so a closing fence sits on its own line."""
    return {path: text.rstrip("\n") + "\n" for path, text in files.items()}
