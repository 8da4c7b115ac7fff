"""The checked-in triage of survivors: each one equivalent (with the reason) or missed (why).

A triage entry names its mutant by id and keeps the mutant's diff: when a port file changes,
cosmic-ray's occurrence numbers can move, and an entry whose diff no longer matches its id's
mutant is stale, not silently applied to a different mutant.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from envport.mutation.generate import Mutant

EQUIVALENT, MISSED, UNTRIAGED, STALE = "equivalent", "missed", "untriaged", "stale"


@dataclass(frozen=True)
class Triage:
    id: str
    diff: str
    equivalent: str | None = None
    missed: str | None = None


class TriageError(Exception):
    """The survivors file is malformed."""


def load_triage(path: Path) -> dict[str, Triage]:
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise TriageError(f"{path}: not valid TOML: {error}") from None
    entries: dict[str, Triage] = {}
    for index, raw in enumerate(data.get("survivor", [])):
        unknown = set(raw) - {"id", "diff", "equivalent", "missed"}
        if unknown or "id" not in raw or "diff" not in raw:
            raise TriageError(
                f"{path}: survivor {index + 1}: expected keys id, diff and one of "
                f"equivalent or missed (got {', '.join(sorted(raw))})"
            )
        if ("equivalent" in raw) == ("missed" in raw):
            raise TriageError(
                f"{path}: survivor {raw['id']}: give exactly one of `equivalent` or `missed`"
            )
        entries[raw["id"]] = Triage(
            raw["id"], raw["diff"], raw.get("equivalent"), raw.get("missed")
        )
    return entries


def verdict(mutant: Mutant, entries: dict[str, Triage]) -> tuple[str, str | None]:
    """A survivor's triage: (equivalent|missed|untriaged|stale, the reason given)."""
    return verdict_of(mutant.id, mutant.diff, entries)


def verdict_of(id: str, diff: str, entries: dict[str, Triage]) -> tuple[str, str | None]:
    """The triage of the survivor `id` whose diff is `diff` (as a score's JSON keeps it)."""
    entry = entries.get(id)
    if entry is None:
        return UNTRIAGED, None
    if entry.diff.strip() != diff.strip():
        return STALE, "the triaged diff no longer matches this mutant"
    if entry.equivalent is not None:
        return EQUIVALENT, entry.equivalent
    return MISSED, entry.missed


def _literal(text: str) -> str:
    # A multi-line literal string keeps a diff exactly as it is (no escapes to read past).
    if "'''" not in text:
        return "'''\n" + text + "'''"
    escaped = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    return '"""\n' + escaped + '"""'


def untriaged_entries(mutants: list[Mutant]) -> str:
    """TOML for survivors nobody has triaged yet, to append and fill in by hand."""
    blocks = []
    for mutant in mutants:
        blocks.append(
            "[[survivor]]\n"
            f'id = "{mutant.id}"\n'
            f'missed = "TODO: triage (equivalent = \\"reason\\" or missed = \\"why\\")"\n'
            f"diff = {_literal(mutant.diff)}\n"
        )
    return "\n".join(blocks)
