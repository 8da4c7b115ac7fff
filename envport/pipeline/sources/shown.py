"""What a module's own prompts add to the shared context: the reference's definitions the
slicer cut (`reference.cut`, or what only they use) that this module ports after all, and
the file names of a folder of the reference's package it reads (`[[targets.<t>.modules]]
shows`). Crafter's pixels module is shown `crafter.engine.LocalView` and the names in
`crafter/assets`; its env module, whose prompts share the context, is not.

A name is a definition of a listed source, `module.Name` or `module.Class.method`, quoted
as the source has it (decorators included); or `package/folder` inside the reference's
installed package, listed by its files' names. One that is neither stops the run, before
any model call, with one line naming it (exit 2)."""

from __future__ import annotations

import ast

from envport.errors import SpecError
from envport.pipeline.sources.reading import ReferenceSource, package_path

SHOWN = "named in the spec's `shows` for this module"
FOLDER = "the files of a folder of the reference's package, by name"


def shown_sources(
    sources: list[ReferenceSource], names: list[str], key: str
) -> list[ReferenceSource]:
    """Each name's text, in the order named; `sources` the reference's whole modules."""
    by_module = {s.module: s for s in sources if s.language == "python"}
    return [
        _folder(name, key) if "/" in name else _definition(by_module, name, key) for name in names
    ]


def _definition(by_module: dict[str, ReferenceSource], name: str, key: str) -> ReferenceSource:
    parts = name.split(".")
    # The longest listed module the name starts with: `crafter.engine` of
    # `crafter.engine.LocalView`; the rest is a definition in it, a class's method at most.
    for cut in range(len(parts) - 1, 0, -1):
        module = ".".join(parts[:cut])
        if module in by_module:
            text = _segment(by_module[module].text, parts[cut:])
            if text is not None:
                return ReferenceSource(name, text, whole=SHOWN)
            break
    raise SpecError(
        f"key `{key}`: {name!r} is no definition of a module in reference.sources "
        "(expected `module.Name` or `module.Class.method`, or `package/folder`)"
    )


def _segment(text: str, path: list[str]) -> str | None:
    if len(path) > 2:
        return None
    body = ast.parse(text).body
    node: ast.AST | None = None
    for part in path:
        node = next(
            (
                n
                for n in body
                if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                and n.name == part
            ),
            None,
        )
        if node is None:
            return None
        body = getattr(node, "body", [])
    assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    lines = text.splitlines()[first - 1 : node.end_lineno]
    indent = min(len(line) - len(line.lstrip()) for line in lines if line.strip())
    return "\n".join(line[indent:] for line in lines) + "\n"


def _folder(name: str, key: str) -> ReferenceSource:
    path = package_path(name)
    if path is None or not path.is_dir():
        raise SpecError(f"key `{key}`: {name!r} names no folder of an installed package")
    names = sorted(entry.name for entry in path.iterdir() if entry.is_file())
    return ReferenceSource(name, "\n".join(names) + "\n", whole=FOLDER, language="text")
