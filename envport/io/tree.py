"""A port's folder walked and copied without recursion, to a bounded depth.

A port folder is untrusted: the standard library's `Path.rglob`, `os.walk` (before Python
3.12) and `shutil.copytree` recurse once per level, so a folder a few thousand levels deep
ended the driver in a RecursionError traceback. Here the walk keeps its own stack and stops
at `MAX_DEPTH` with one line naming the folder: no port needs its files that far down, and
a bounded depth also keeps every path under the system's length limit.

A link to a folder is never entered (as `rglob` does not); a link to a file counts as a file.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

from envport.errors import EnvportError

MAX_DEPTH = 32

Parts = tuple[str, ...]


def _skip_nothing(parts: Parts) -> bool:
    return False


def _walk(root: Path, skip: Callable[[Parts], bool]) -> tuple[list[Parts], list[Parts]]:
    """The folders and files under `root` as relative parts, each sorted; `skip` is asked
    about every entry, and a skipped folder is not entered."""
    folders: list[Parts] = []
    files: list[Parts] = []
    stack: list[Parts] = [()]
    while stack:
        parts = stack.pop()
        try:
            with os.scandir(root.joinpath(*parts)) as entries:
                listed = list(entries)
        except OSError as error:
            where = "/".join(parts) or "."
            raise EnvportError(
                f"{root}: cannot read its folder {where}: {error.strerror or error}"
            ) from None
        for entry in listed:
            inner = (*parts, entry.name)
            if skip(inner):
                continue
            if entry.is_dir(follow_symlinks=False):
                if len(inner) > MAX_DEPTH:
                    shown = "/".join(inner[:3])
                    raise EnvportError(
                        f"{root}: the folder {shown}/... goes more than {MAX_DEPTH} levels "
                        f"deep; a port keeps its files at most {MAX_DEPTH} folders down: "
                        "remove that folder"
                    )
                folders.append(inner)
                stack.append(inner)
            elif _is_file(entry):
                files.append(inner)
    return sorted(folders), sorted(files)


def _is_file(entry: os.DirEntry[str]) -> bool:
    """A file, or a link to one; a link that loops or leads nowhere is neither (ELOOP)."""
    try:
        return entry.is_file()
    except OSError:
        return False


def files_under(root: Path, skip: Callable[[Parts], bool] = _skip_nothing) -> list[Path]:
    """Every file under `root`, in a stable order (sorted by relative path)."""
    return [root.joinpath(*parts) for parts in _walk(root, skip)[1]]


def copy_tree(source: Path, destination: Path, skip: Callable[[Parts], bool]) -> None:
    """Copy the folder `source` to the new folder `destination`, the entries `skip` names
    left out."""
    folders, files = _walk(source, skip)
    destination.mkdir(parents=True)
    for parts in folders:
        destination.joinpath(*parts).mkdir()
    for parts in files:
        shutil.copy2(source.joinpath(*parts), destination.joinpath(*parts))


def named(*names: str) -> Callable[[Parts], bool]:
    """A `skip` for entries with one of `names` anywhere in their path (`__pycache__`)."""
    chosen = frozenset(names)
    return lambda parts: parts[-1] in chosen
