"""The reference source cut down, by its syntax tree, to what a port needs.

A Gymnasium module carries much a port never uses: rendering (often a hundred lines of
pygame), `close`, `metadata`, vectorised variants, long docstrings. The slice keeps the env
class's `__init__`, `reset` and `step` and everything they use (reach.py finds it on
the syntax tree) as the reference's own lines, comments included; it cuts long docstrings
and the comment blocks that name files of the reference's package (found by the tokenizer).
Each slice lists what it cut, so the prompt can say so; the whole source stays available
(a repair that is stuck gets it).
"""

from __future__ import annotations

import ast
import dataclasses
import io
import re
import tokenize
from collections.abc import Collection
from dataclasses import dataclass, field

from envport.pipeline.sources.imports import ImportResolver, Module
from envport.pipeline.sources.reach import (
    CUT_CLASS_ATTRIBUTES,
    Slicer,
    bound_names,
    docstring,
    methods_of,
)

# What the prompt says of the definitions the spec's `reference.cut` names.
SPEC_CUT = "named in the spec's reference.cut: not part of the port"
# A docstring longer than this is cut: the code it describes is kept.
MAX_DOCSTRING_LINES = 8
# A path with a file's extension, in a comment (`utils/env_checker.py`).
FILE_NAME = re.compile(r"[\w./-]+\.(?:py|md|txt|toml|json|png|cfg)\b")


@dataclass(frozen=True)
class Slice:
    """One module's kept text and what was cut from it (one phrase per kind of cut)."""

    text: str
    cut: list[str]
    # Prefixes of modules it loads by a computed name that the spec lists none under.
    unlisted: list[str] = field(default_factory=list)
    # The entry reaches nothing in it: sliced from its own names instead (slice_modules).
    unreached: bool = False


class UnknownCut(ValueError):
    """A name in the spec's `reference.cut` that no listed module defines."""


def _cut_targets(modules: list[Module], names: Collection[str]) -> set[tuple[str, ...]]:
    """Each `module.Name` or `module.Class.method` as (module, Name) or (module, Class,
    method), the module the longest listed one it starts with."""
    by_name = {m.name: m for m in modules}
    targets: set[tuple[str, ...]] = set()
    for dotted in names:
        owners = [m for m in by_name if dotted.startswith(m + ".")]
        module = by_name[max(owners, key=len)] if owners else None
        parts = dotted[len(module.name) + 1 :].split(".") if module else []
        node = module.bindings.get(parts[0]) if module and len(parts) in (1, 2) else None
        if len(parts) == 2 and not (
            isinstance(node, ast.ClassDef) and parts[1] in methods_of(node)
        ):
            node = None
        if module is None or node is None:
            raise UnknownCut(f"{dotted!r} names no definition of a module reference.sources lists")
        targets.add((module.name, *parts))
    return targets


def _start(node: ast.stmt) -> int:
    decorators = [d.lineno for d in getattr(node, "decorator_list", [])]
    return min([node.lineno, *decorators])


def _with_comments_above(lines: list[str], start: int) -> int:
    """The first line of the comment block directly above line `start` (1-based)."""
    while start > 1 and lines[start - 2].strip().startswith("#"):
        start -= 1
    return start


def _span(lines: list[str], node: ast.stmt) -> range:
    end = node.end_lineno or node.lineno
    return range(_with_comments_above(lines, _start(node)), end + 1)


def _comments_naming_files(module: Module, kept: set[int]) -> list[set[int]]:
    """Kept comment blocks (comment-only lines, found by the tokenizer) that name a file of
    the reference's package: the model sees only the prompt."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO("\n".join(module.lines)).readline))
    except (tokenize.TokenError, SyntaxError):
        return []
    alone = {
        t.start[0]
        for t in tokens
        if t.type == tokenize.COMMENT and not module.lines[t.start[0] - 1][: t.start[1]].strip()
    }
    blocks: list[set[int]] = []
    for number in sorted(alone & kept):
        if blocks and number - 1 in blocks[-1]:
            blocks[-1].add(number)
        else:
            blocks.append({number})
    return [b for b in blocks if any(FILE_NAME.search(module.lines[n - 1]) for n in b)]


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _render(module: Module, slicer: Slicer) -> Slice:
    lines = module.lines
    kept_names = slicer.kept[module.name]
    keep: set[int] = set()
    cut_lines: set[int] = set()
    cut: list[str] = []
    cut_defs: list[str] = []
    docstrings: list[str] = []
    imports = others = 0
    kept_nodes: list[ast.stmt] = []
    module_doc = docstring(module.tree.body)
    spec_cut: list[str] = []
    for node in module.tree.body:
        names = bound_names(node)
        if not (set(names) & kept_names):
            if isinstance(node, ast.Import | ast.ImportFrom):
                imports += 1
            elif (module.name, getattr(node, "name", "")) in slicer.cut:
                spec_cut.append(f"`{getattr(node, 'name', '')}`")
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                cut_defs.append(f"`{node.name}`")
            elif node is module_doc:
                docstrings.append("the module's")
            elif names:
                cut_defs.append(", ".join(f"`{n}`" for n in names))
            else:
                others += 1
            continue
        keep |= set(_span(lines, node))
        kept_nodes.append(node)
        if not isinstance(node, ast.ClassDef):
            continue
        methods = slicer.kept_methods.get((module.name, node.name), set())
        for stmt in node.body:
            bound = bound_names(stmt)
            if (
                isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef)
                and stmt.name not in methods
            ):
                cut_lines |= set(_span(lines, stmt))
                spec_named = (module.name, node.name, stmt.name) in slicer.cut
                (spec_cut if spec_named else cut_defs).append(f"`{node.name}.{stmt.name}`")
            elif set(bound) & CUT_CLASS_ATTRIBUTES:
                cut_lines |= set(_span(lines, stmt))
                cut_defs.append(f"`{node.name}.{bound[0]}`")
    # Long docstrings of what is kept: the kept classes', their kept methods', functions'.
    for node in kept_nodes:
        name = getattr(node, "name", "")
        methods = slicer.kept_methods.get((module.name, name), set())
        owners = [(name, node)] + [
            (f"{name}.{m.name}", m)
            for m in getattr(node, "body", [])
            if isinstance(m, ast.FunctionDef | ast.AsyncFunctionDef) and m.name in methods
        ]
        for owner, holder in owners:
            body = getattr(holder, "body", [])
            doc = docstring(body) if isinstance(body, list) else None
            length = (doc.end_lineno or doc.lineno) - doc.lineno + 1 if doc else 0
            if doc is not None and length > MAX_DOCSTRING_LINES and len(body) > 1:
                cut_lines |= set(_span(lines, doc))
                docstrings.append(f"`{owner}`'s ({length} lines)")
    # The dropped statements of this module only: line numbers of another would cut here.
    own = set(ast.walk(module.tree))
    within = [s for s in slicer.dropped if s in own and s.lineno in keep]
    # A dropped block's own statements are not counted again.
    dropped = [
        s
        for s in within
        if not any(o is not s and o.lineno <= s.lineno <= (o.end_lineno or 0) for o in within)
    ]
    for stmt in dropped:
        cut_lines |= set(_span(lines, stmt))
    if spec_cut:
        cut.append(f"{', '.join(spec_cut)} ({SPEC_CUT})")
    if cut_defs:
        cut.append(f"{', '.join(cut_defs)} (rendering, closing, metadata, unused code)")
    if dropped:
        cut.append(f"{_plural(len(dropped), 'statement')} that only serve rendering")
    if docstrings:
        cut.append(f"long docstrings ({', '.join(docstrings)})")
    if imports:
        cut.append(_plural(imports, "import") + " nothing kept uses")
    if others:
        cut.append(_plural(others, "other top-level statement"))
    naming = _comments_naming_files(module, keep - cut_lines)
    if naming:
        cut.append(_plural(len(naming), "comment") + " naming files of the reference's package")
    text = _join(lines, kept_nodes, keep - cut_lines - set().union(*naming))
    return Slice(text, cut, sorted(slicer.unlisted.get(module.name, ())))


def _join(lines: list[str], nodes: list[ast.stmt], keep: set[int]) -> str:
    """The kept lines of each kept top-level node, one blank line between nodes that were
    apart in the reference; blank runs that cut code leaves behind squeezed to one."""
    parts: list[str] = []
    previous_end = 0
    for node in nodes:
        span = _span(lines, node)
        if parts and span[0] > previous_end + 1:
            parts.append("")
        for number in span:
            if number in keep:
                parts.append(lines[number - 1])
        previous_end = span[-1]
    out: list[str] = []
    for line in parts:
        if not line.strip() and out and not out[-1].strip():
            continue
        out.append(line if line.strip() else "")
    return "\n".join(out).strip("\n") + "\n"


def slice_modules(
    sources: list[tuple[str, str]],
    entry: tuple[str, str] | None,
    harness_attributes: set[str],
    packages: Collection[str] = (),
    cut: Collection[str] = (),
) -> list[Slice] | None:
    """Each of `sources` (module name, text) sliced from `entry` (module, env class or
    factory name); None when no entry is found in them or a source does not parse, so the
    caller keeps the whole text. `packages`: the sources that are packages' `__init__`
    (their relative imports are relative to themselves). `cut`: the spec's names to leave
    out however the code reaches them (UnknownCut for one no source defines)."""
    modules = []
    for name, text in sources:
        try:
            tree = ast.parse(text)
        except SyntaxError:
            return None
        module = Module(name, text.splitlines(), tree)
        for node in tree.body:
            for bound in bound_names(node):
                module.bindings.setdefault(bound, node)
        modules.append(module)
    targets = _cut_targets(modules, cut)
    names = {m.name for m in modules}
    roots = [entry] if entry else []
    if not roots or roots[0][0] not in names:
        # No named entry among the sources: every class with a `step` is a root.
        roots = [
            (m.name, n.name)
            for m in modules
            for n in m.tree.body
            if isinstance(n, ast.ClassDef) and "step" in methods_of(n)
        ]
    by_name = {m.name: m for m in modules}
    roots = [(m, n) for m, n in roots if n in by_name[m].bindings]
    if not roots:
        return None
    resolver = ImportResolver(list(names), packages)
    slices = _reach(modules, roots, harness_attributes, resolver, targets)
    # A listed module the entry reaches nothing of (an `import_module` call whose argument
    # is computed, `"minatar.environments." + game`; a registry of classes) is where the
    # user says rules live: every top-level name in it is a root too, so it is sliced,
    # never left out.
    unreached = [m for m, s in zip(modules, slices, strict=True) if not s.text.strip()]
    if unreached:
        extra = [(m.name, name) for m in unreached for name in m.bindings]
        slices = _reach(modules, roots + extra, harness_attributes, resolver, targets)
        slices = [
            dataclasses.replace(cut, unreached=module in unreached)
            for module, cut in zip(modules, slices, strict=True)
        ]
    return slices


def _reach(
    modules: list[Module],
    roots: list[tuple[str, str]],
    harness_attributes: set[str],
    resolver: ImportResolver,
    cut: set[tuple[str, ...]],
) -> list[Slice]:
    dropped: set[ast.stmt] = set()
    while True:
        # What only dropped statements used is not needed either: reach again without
        # them until nothing more is dropped (the dropped set only grows, so this ends).
        slicer = Slicer(modules, harness_attributes, resolver, cut)
        slicer.dropped = set(dropped)
        for module_name, name in roots:
            slicer.keep_name(module_name, name)
        slicer.run()
        slicer.drop_render_statements()
        if slicer.dropped == dropped:
            return [_render(m, slicer) for m in modules]
        dropped = slicer.dropped
