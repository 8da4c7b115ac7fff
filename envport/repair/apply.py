"""Writing parsed edits into a port directory, with the diff of each for the transcript."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

from envport.io import write_atomically
from envport.io.tree import files_under, named


@dataclass(frozen=True)
class AppliedEdit:
    path: str  # relative to the directory it was written in
    diff: str  # unified diff; empty when the answer repeated the file unchanged
    created: bool

    @property
    def changed(self) -> bool:
        return bool(self.diff)

    def stat(self) -> str:
        added = sum(
            1 for line in self.diff.splitlines() if line.startswith("+") and line[:3] != "+++"
        )
        removed = sum(
            1 for line in self.diff.splitlines() if line.startswith("-") and line[:3] != "---"
        )
        return f"{self.path} (+{added} -{removed})"


def unified_diff(path: str, before: str, after: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"a/{path}" if before else "/dev/null",
        tofile=f"b/{path}",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def apply_edits(directory: Path, files: dict[str, str]) -> list[AppliedEdit]:
    """Write whole files (paths already checked by the parser) and say what changed.

    All or none: each file is replaced atomically, and a write that fails (a full disk, a
    permission) puts back the files this call already wrote before the error goes on, so an
    answer's edits never land half. (A kill between two files is undone by the step's
    replay, which resets the port to the last commit.)"""
    applied = []
    written: list[tuple[Path, str | None]] = []
    try:
        for relative, content in files.items():
            target = directory / relative
            existed = target.is_file()
            before = target.read_text(encoding="utf-8") if existed else ""
            if before != content:
                write_atomically(target, content)
                written.append((target, before if existed else None))
            diff = unified_diff(relative, before, content)
            applied.append(AppliedEdit(relative, diff, not before))
    except BaseException:
        for target, previous in reversed(written):
            if previous is None:
                target.unlink(missing_ok=True)
            else:
                write_atomically(target, previous)
        raise
    return applied


def read_files(directory: Path, endings: tuple[str, ...] = (".py",)) -> dict[str, str]:
    """Every file of a port whose name ends with one of `endings` (".rs", "Cargo.toml"), by
    relative path, in a stable order (prompts must not flicker)."""
    if not directory.is_dir():
        return {}
    found = {}
    for path in files_under(directory, named("__pycache__")):
        if not path.name.endswith(endings):
            continue
        found[path.relative_to(directory).as_posix()] = path.read_text(encoding="utf-8")
    return found
