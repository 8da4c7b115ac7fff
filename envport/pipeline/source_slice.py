"""The reference source cut down, by its syntax tree, to what a port needs.

A Gymnasium module carries much a port never uses: rendering (often a hundred lines of
pygame), `close`, `metadata`, vectorised variants, long docstrings. The slice keeps the env
class's `__init__`, `reset` and `step`, every method and module-level definition they use
(transitively, across the spec's source modules), and the imports those use; within a kept
method it drops the statements that only feed rendering: an `if self.render_mode ...`
block, a `self.render()` call, an assignment to an attribute only cut code reads. Positions
come from the syntax tree, never from patterns on the text; the kept lines are the
reference's own, comments included. Each slice lists what it cut, so the prompt can say so;
the whole source stays available (a repair that is stuck gets it).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

# The methods a port ports; everything else is kept only if these use it.
ROOTS = ("__init__", "reset", "step")
# Class attributes a port never needs (render modes and frame rates).
CUT_CLASS_ATTRIBUTES = {"metadata"}
# A docstring longer than this is cut: the code it describes is kept.
MAX_DOCSTRING_LINES = 8


@dataclass(frozen=True)
class Slice:
    """One module's kept text and what was cut from it (one phrase per kind of cut)."""

    text: str
    cut: list[str]


@dataclass
class _Module:
    name: str
    lines: list[str]
    tree: ast.Module
    # Top-level name -> the statement that binds it (def, class, assignment, import).
    bindings: dict[str, ast.stmt] = field(default_factory=dict)


def _bound_names(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.Import | ast.ImportFrom):
        return [(a.asname or a.name).split(".")[0] for a in node.names]
    if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    return []


def _methods(cls: ast.ClassDef) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    return {n.name: n for n in cls.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}


def _walk(node: ast.AST) -> Iterator[ast.AST]:
    """ast.walk without the statements that only serve rendering (whatever they call is not
    thereby kept)."""
    todo = [node]
    while todo:
        current = todo.pop()
        yield current
        todo += [
            child
            for child in ast.iter_child_nodes(current)
            if not (isinstance(child, ast.stmt) and _is_render_only(child))
        ]


def _self_attributes(node: ast.AST, ctx: type[ast.expr_context]) -> set[str]:
    return {
        n.attr
        for n in _walk(node)
        if isinstance(n, ast.Attribute)
        and isinstance(n.value, ast.Name)
        and n.value.id == "self"
        and isinstance(n.ctx, ctx)
    }


def _names_loaded(node: ast.AST) -> set[str]:
    return {n.id for n in _walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _docstring(body: list[ast.stmt]) -> ast.Expr | None:
    first = body[0] if body else None
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        return first
    return None


def _is_render_only(stmt: ast.stmt) -> bool:
    """`if self.render_mode == "human": self.render()` and a bare `self.render()` call."""
    if isinstance(stmt, ast.If) and not stmt.orelse:
        return any(
            (isinstance(n, ast.Attribute) and n.attr == "render_mode")
            or (isinstance(n, ast.Name) and n.id == "render_mode")
            for n in ast.walk(stmt.test)
        )
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        func = stmt.value.func
        return (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == "self"
            and func.attr in ("render", "close")
        )
    return False


def _assigned_attributes(stmt: ast.stmt) -> set[str] | None:
    """The `self.X` an assignment statement writes, or None if it writes anything else."""
    if not isinstance(stmt, ast.Assign | ast.AnnAssign | ast.AugAssign):
        return None
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    written: set[str] = set()
    for target in targets:
        items = target.elts if isinstance(target, ast.Tuple | ast.List) else [target]
        for item in items:
            if not (
                isinstance(item, ast.Attribute)
                and isinstance(item.value, ast.Name)
                and item.value.id == "self"
            ):
                return None
            written.add(item.attr)
    return written


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement of a function body, nested blocks included (not nested defs)."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        for name in ("body", "orelse", "finalbody"):
            yield from _statements(getattr(stmt, name, []))
        for handler in getattr(stmt, "handlers", []):
            yield from _statements(handler.body)


class _Slicer:
    def __init__(self, modules: list[_Module], harness_attributes: set[str]) -> None:
        self.modules = {m.name: m for m in modules}
        # Attributes the harness reads from the env (`unwrapped.state`): always kept.
        self.harness_attributes = harness_attributes
        self.kept: dict[str, set[str]] = {m.name: set() for m in modules}
        self.kept_methods: dict[tuple[str, str], set[str]] = {}
        self.dropped: set[ast.stmt] = set()
        self._queue: list[tuple[str, ast.AST, ast.ClassDef | None]] = []

    # --- reachability -------------------------------------------------------------------

    def keep_name(self, module: str, name: str) -> None:
        node = self.modules[module].bindings.get(name)
        if node is None or name in self.kept[module]:
            return
        self.kept[module].add(name)
        if isinstance(node, ast.ImportFrom) and node.module in self.modules and node.level == 0:
            # A name imported from another source module: keep its definition there too.
            for alias in node.names:
                if (alias.asname or alias.name) == name:
                    self.keep_name(node.module, alias.name)
        if isinstance(node, ast.ClassDef):
            self._keep_class(module, node)
        else:
            self._queue.append((module, node, None))

    def _keep_class(self, module: str, cls: ast.ClassDef) -> None:
        self.kept_methods.setdefault((module, cls.name), set())
        for part in [*cls.bases, *cls.keywords, *cls.decorator_list]:
            self._queue.append((module, part, None))
        for stmt in cls.body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            if set(_bound_names(stmt)) & CUT_CLASS_ATTRIBUTES or stmt is _docstring(cls.body):
                continue
            self._queue.append((module, stmt, cls))
        for name in ROOTS:
            self.keep_method(module, cls, name)

    def keep_method(self, module: str, cls: ast.ClassDef, name: str) -> None:
        kept = self.kept_methods.setdefault((module, cls.name), set())
        method = _methods(cls).get(name)
        if method is not None and name not in kept:
            kept.add(name)
            self._queue.append((module, method, cls))

    def run(self) -> None:
        while self._queue:
            module, node, cls = self._queue.pop()
            for name in _names_loaded(node):
                self.keep_name(module, name)
            if cls is not None:
                for attribute in _self_attributes(node, ast.Load):
                    self.keep_method(module, cls, attribute)

    # --- statements that only feed rendering ---------------------------------------------

    def drop_render_statements(self) -> None:
        for module, cls_name in self.kept_methods:
            cls = self.modules[module].bindings[cls_name]
            assert isinstance(cls, ast.ClassDef)
            methods = _methods(cls)
            kept = [methods[n] for n in sorted(self.kept_methods[(module, cls_name)])]
            cut = [m for n, m in methods.items() if n not in self.kept_methods[(module, cls_name)]]
            # What cut methods read or write: rendering's own attributes (`self.screen`).
            touched_by_cut = set().union(
                *(_self_attributes(m, ast.Load) | _self_attributes(m, ast.Store) for m in cut)
            )
            for method in kept:
                self.dropped |= {s for s in _statements(method.body) if _is_render_only(s)}
            # An attribute written for rendering may be read by another such assignment
            # (`cell_size` from `window_size`): drop until nothing more goes.
            while True:
                read = self._attributes_read([*kept, cls])
                more = {
                    s
                    for method in kept
                    for s in _statements(method.body)
                    if s not in self.dropped
                    and (written := _assigned_attributes(s)) is not None
                    and written <= touched_by_cut - read - self.harness_attributes
                }
                more |= {
                    s
                    for s in cls.body
                    if s not in self.dropped
                    and isinstance(s, ast.Assign | ast.AnnAssign)
                    and set(_bound_names(s)) <= touched_by_cut - read - self.harness_attributes
                }
                if not more:
                    break
                self.dropped |= more

    def _attributes_read(self, methods: Iterable[ast.AST]) -> set[str]:
        read: set[str] = set()
        for method in methods:
            for stmt in _statements(getattr(method, "body", [])):
                if stmt in self.dropped:
                    continue
                # Only the statement's own expressions: its nested blocks are visited apart.
                for part in ast.iter_child_nodes(stmt):
                    if not isinstance(part, ast.stmt):
                        read |= _self_attributes(part, ast.Load)
        return read


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


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _render(module: _Module, slicer: _Slicer) -> Slice:
    lines = module.lines
    kept_names = slicer.kept[module.name]
    keep: set[int] = set()
    cut_lines: set[int] = set()
    cut: list[str] = []
    cut_defs: list[str] = []
    docstrings: list[str] = []
    imports = others = 0
    kept_nodes: list[ast.stmt] = []
    module_doc = _docstring(module.tree.body)
    for node in module.tree.body:
        names = _bound_names(node)
        if not (set(names) & kept_names):
            if isinstance(node, ast.Import | ast.ImportFrom):
                imports += 1
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
            bound = _bound_names(stmt)
            if (
                isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef)
                and stmt.name not in methods
            ):
                cut_lines |= set(_span(lines, stmt))
                cut_defs.append(f"`{node.name}.{stmt.name}`")
            elif set(bound) & CUT_CLASS_ATTRIBUTES:
                cut_lines |= set(_span(lines, stmt))
                cut_defs.append(f"`{node.name}.{bound[0]}`")
        bodies = [(node.name, node.body)] + [
            (f"{node.name}.{m.name}", m.body)
            for m in node.body
            if isinstance(m, ast.FunctionDef | ast.AsyncFunctionDef) and m.name in methods
        ]
        for owner, body in bodies:
            doc = _docstring(body)
            length = doc.end_lineno - doc.lineno + 1 if doc and doc.end_lineno else 0
            if doc is not None and length > MAX_DOCSTRING_LINES and len(body) > 1:
                cut_lines |= set(_span(lines, doc))
                docstrings.append(f"`{owner}`'s ({length} lines)")
    for node in module.tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in kept_names:
            doc = _docstring(node.body)
            length = doc.end_lineno - doc.lineno + 1 if doc and doc.end_lineno else 0
            if doc is not None and length > MAX_DOCSTRING_LINES and len(node.body) > 1:
                cut_lines |= set(_span(lines, doc))
                docstrings.append(f"`{node.name}`'s ({length} lines)")
    within = [s for s in slicer.dropped if s.lineno in keep]
    # A dropped block's own statements are not counted again.
    dropped = [
        s
        for s in within
        if not any(o is not s and o.lineno <= s.lineno <= (o.end_lineno or 0) for o in within)
    ]
    for stmt in dropped:
        cut_lines |= set(_span(lines, stmt))
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
    text = _join(lines, kept_nodes, keep - cut_lines)
    return Slice(text, cut)


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
    sources: list[tuple[str, str]], entry: tuple[str, str] | None, harness_attributes: set[str]
) -> list[Slice] | None:
    """Each of `sources` (module name, text) sliced from `entry` (module, env class or
    factory name); None when no entry is found in them or a source does not parse, so the
    caller keeps the whole text."""
    modules = []
    for name, text in sources:
        try:
            tree = ast.parse(text)
        except SyntaxError:
            return None
        module = _Module(name, text.splitlines(), tree)
        for node in tree.body:
            for bound in _bound_names(node):
                module.bindings.setdefault(bound, node)
        modules.append(module)
    slicer = _Slicer(modules, harness_attributes)
    roots = [entry] if entry else []
    if not roots or roots[0][0] not in slicer.modules:
        # No named entry among the sources: every class with a `step` is a root.
        roots = [
            (m.name, n.name)
            for m in modules
            for n in m.tree.body
            if isinstance(n, ast.ClassDef) and "step" in _methods(n)
        ]
    roots = [(m, n) for m, n in roots if n in slicer.modules[m].bindings]
    if not roots:
        return None
    for module_name, name in roots:
        slicer.keep_name(module_name, name)
    slicer.run()
    slicer.drop_render_statements()
    return [_render(m, slicer) for m in modules]
