"""A variant: an example whose spec names the example it varies (`base = "../blackjack"`)
and whose folder holds only the files that differ from that base's.

What fills in (docs/spec.md, "Variants"): a file the spec names by relative path (probes, a
noise harness, a state bridge or reference factory, a rules document, a policy, and the
self-check's `mutants.toml`) is the variant's own if its folder has it, else its base's,
else the base's base's; a known-good port inside the variant's folder (`ports/<target>`) is
the base's `ports/<target>` with the variant's own files laid over it. The spec itself is
never merged: a variant's `envport.toml` is whole, so what is checked is read in one file.

The driver composes such a port by copying files (it never imports them) into a directory
named by the hash of what it holds, which the sandboxed worker then loads like any port.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import tempfile
import tomllib
from pathlib import Path
from typing import Any

from envport.errors import EnvportError, SpecError
from envport.io.scratch import remove_tree
from envport.io.tree import files_under

BASE_KEY = "base"
# envport.spec's file name, repeated here: the spec's module imports this one.
SPEC_FILENAME = "envport.toml"
# What a port directory holds that is not the port: bytecode, a crate's build.
_NOT_PORT = frozenset({"__pycache__", "target"})


def _shown(path: Path) -> str:
    """A path as a user reads it: relative to the working directory when it is below it."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def base_folders(file: Path, data: dict[str, Any]) -> tuple[Path, ...]:
    """The folders a spec's files fill in from: its own, then each base's in turn.

    A base that is missing, not a spec, or leads back to a spec already on the chain is one
    `SpecError` line naming the spec whose `base` key is wrong."""
    file = file.resolve()
    folders = [file.parent]
    chain = [file]
    while BASE_KEY in data:
        given = data[BASE_KEY]
        where = f"{_shown(file)}: key `{BASE_KEY}`"
        if not isinstance(given, str) or not given.strip():
            raise SpecError(
                f"{where}: expected the path of the example this spec varies (a folder "
                f"holding {SPEC_FILENAME}, relative to the spec), got {given!r}"
            )
        named = file.parent / given
        base = named / SPEC_FILENAME if named.is_dir() else named
        if not base.is_file():
            raise SpecError(
                f"{where}: {given!r} is no example: {_shown(named)} is not a folder holding "
                f"{SPEC_FILENAME} nor a spec file"
            )
        base = base.resolve()
        if base in chain:
            loop = " -> ".join(_shown(spec) for spec in [*chain[chain.index(base) :], base])
            raise SpecError(f"{where}: a cycle of variants: {loop}")
        try:
            data = tomllib.loads(base.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, OSError, UnicodeDecodeError) as error:
            raise SpecError(f"{where}: cannot read the base {_shown(base)}: {error}") from None
        chain.append(base)
        if base.parent not in folders:  # a variant's spec file beside its base's shares it
            folders.append(base.parent)
        file = base
    return tuple(folders)


def spec_folders(spec_file: Path) -> tuple[Path, ...]:
    """A spec file's folder and its bases' folders: what a worker loading the reference from
    it must be able to read (a variant's bridge may be its base's)."""
    try:
        data = tomllib.loads(spec_file.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, OSError, UnicodeDecodeError):
        return (spec_file.parent,)  # the worker's own load says what is wrong with it
    return base_folders(spec_file, data)


def fill_in(folders: tuple[Path, ...], relative: str) -> Path:
    """A file named relative to the spec: the first folder of the chain that has it, else
    the spec's own folder (so a missing file is reported where the user would add it)."""
    path = Path(relative)
    if path.is_absolute():
        return path
    for folder in folders:
        candidate = (folder / path).resolve()
        if candidate.exists():
            return candidate
    return (folders[0] / path).resolve()


def port_layers(folders: tuple[Path, ...], port: Path) -> list[Path]:
    """The directories a port is made of, the variant's own first. Only a port inside the
    variant's folder takes files from its bases (a run's generated port is whole)."""
    if len(folders) < 2 or not port.resolve().is_relative_to(folders[0]):
        return [port]
    relative = port.resolve().relative_to(folders[0])
    return [folder / relative for folder in folders if (folder / relative).is_dir()] or [port]


def _files(layers: list[Path]) -> dict[str, Path]:
    """Relative path -> the file the port takes, a nearer layer's over a farther one's."""
    chosen: dict[str, Path] = {}
    for layer in reversed(layers):
        for path in files_under(layer, lambda parts: parts[-1] in _NOT_PORT):
            chosen[path.relative_to(layer).as_posix()] = path
    return chosen


def compose_port(folders: tuple[Path, ...], port: Path, cache: Path) -> Path:
    """The directory a worker loads for `port`: itself, or, for a variant's port that lays
    its files over its base's, their union under `cache`, named by its content's hash (the
    same files, the same directory; a changed file, a new one)."""
    layers = port_layers(folders, port)
    if len(layers) == 1:
        return layers[0]
    files = _files(layers)
    digest = hashlib.sha256()
    for relative, path in sorted(files.items()):
        digest.update(relative.encode() + b"\0" + path.read_bytes() + b"\0")
    composed = cache / digest.hexdigest()[:32]
    if composed.is_dir():
        return composed
    try:
        cache.mkdir(parents=True, exist_ok=True)
        # Built beside its final name and renamed into place: a kill never leaves half a port
        # under the name a later run would trust.
        building = Path(tempfile.mkdtemp(prefix=".composing-", dir=cache))
        try:
            for relative, path in files.items():
                (building / relative).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, building / relative)
            os.rename(building, composed)
        except OSError:
            with contextlib.suppress(OSError):
                remove_tree(building)
            if not composed.is_dir():  # else another process composed it first
                raise
    except OSError as error:
        raise EnvportError(
            f"--port {port}: cannot compose the variant's port with its base's in {cache} "
            f"({error}); set ENVPORT_CACHE_DIR to a writable directory"
        ) from None
    return composed


_BASE_LINE = re.compile(rf"^[ \t]*{BASE_KEY}[ \t]*=.*$", re.MULTILINE)


def frozen_text(text: str) -> str:
    """A variant's spec text for a run's frozen copy: the `base` line turned into a comment,
    since the run holds the files it took from its bases beside the copy."""
    data = tomllib.loads(text)
    if BASE_KEY not in data:
        return text
    lines = list(_BASE_LINE.finditer(text))
    frozen = text
    if len(lines) == 1:
        line = lines[0]
        note = f"# {line.group(0).strip()}  (frozen: its files are copied into this run)"
        frozen = text[: line.start()] + note + text[line.end() :]
    expected = {key: value for key, value in data.items() if key != BASE_KEY}
    if len(lines) != 1 or tomllib.loads(frozen) != expected:
        raise SpecError(
            f"key `{BASE_KEY}`: write it once, on its own line, before the spec's first table"
        )
    return frozen
