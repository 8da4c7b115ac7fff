"""What of the reference's source a port needs, found on its syntax tree (slicing.py
turns it into text).

Kept: the env class's `__init__`, `reset` and `step`, every method and module-level
definition they use (transitively, across the spec's source modules), and the imports those
use. "Use" follows what Python would run: a name imported from a package that re-exports
it, a module loaded by `import_module`, a method through an attribute holding an instance
of a listed class (names.py), an inherited method and a subclass's override of a
kept one, the subclasses of a kept class, and, where a value's class is unknown, every
kept class's method of that name.

Within a kept method the statements that only feed rendering are dropped: an
`if self.render_mode ...` block, a `self.render()` call, an assignment to an attribute only
cut code touches. Everything is decided on the syntax tree, never by patterns on the text.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterable, Iterator

from envport.pipeline.sources.imports import ImportResolver, Module, import_call
from envport.pipeline.sources.names import Types

# The methods a port ports; everything else is kept only if these use it.
ROOTS = ("__init__", "reset", "step")
# Class attributes a port never needs (render modes and frame rates).
CUT_CLASS_ATTRIBUTES = {"metadata"}


# What a statement storing into `globals()[...]` binds (constants.py's loop over a YAML
# file's keys): any name the module does not bind otherwise.
DYNAMIC = "globals()"


def bound_names(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.Import | ast.ImportFrom):
        return [(a.asname or a.name).split(".")[0] for a in node.names]
    if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        names = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
        return names + ([DYNAMIC] if any(map(_stores_globals, targets)) else [])
    if isinstance(node, ast.If) and _is_main_guard(node.test):
        return []
    if isinstance(node, ast.If | ast.Try | ast.For | ast.While | ast.With):
        # A block binds what its statements bind (`try: import gym; BaseClass = gym.Env`).
        inner = [*node.body, *getattr(node, "orelse", []), *getattr(node, "finalbody", [])]
        inner += [s for h in getattr(node, "handlers", []) for s in h.body]
        return list(dict.fromkeys(n for s in inner for n in bound_names(s)))
    return []


def _stores_globals(target: ast.expr) -> bool:
    return (
        isinstance(target, ast.Subscript)
        and isinstance(target.value, ast.Call)
        and isinstance(target.value.func, ast.Name)
        and target.value.func.id == "globals"
    )


def _is_main_guard(test: ast.expr) -> bool:
    return isinstance(test, ast.Compare) and any(
        isinstance(n, ast.Name) and n.id == "__name__" for n in ast.walk(test)
    )


def methods_of(cls: ast.ClassDef) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    return {n.name: n for n in cls.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}


def walk_kept(node: ast.AST, skip: Collection[ast.stmt] = ()) -> Iterator[ast.AST]:
    """ast.walk without the statements that only serve rendering and those in `skip`
    (whatever they use is not thereby kept)."""
    todo = [node]
    while todo:
        current = todo.pop()
        yield current
        todo += [
            child
            for child in ast.iter_child_nodes(current)
            if not (isinstance(child, ast.stmt) and (_is_render_only(child) or child in skip))
        ]


def _self_attributes(
    node: ast.AST, ctx: type[ast.expr_context], skip: Collection[ast.stmt] = ()
) -> set[str]:
    return {
        n.attr
        for n in walk_kept(node, skip)
        if isinstance(n, ast.Attribute)
        and isinstance(n.value, ast.Name)
        and n.value.id == "self"
        and isinstance(n.ctx, ctx)
    }


def _names_loaded(node: ast.AST, skip: Collection[ast.stmt]) -> set[str]:
    return {
        n.id
        for n in walk_kept(node, skip)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }


def docstring(body: list[ast.stmt]) -> ast.Expr | None:
    first = body[0] if body else None
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        return first
    return None


# Libraries that only draw: a bare call into one (mpe2's `pygame_freetype.init()` in its
# env's `__init__`) serves rendering alone.
DRAWING_PACKAGES = ("pygame", "pyglet", "matplotlib", "cv2")


def drawing_names(module: ast.Module) -> set[str]:
    """The top-level names a module binds to a drawing library (`import pygame.freetype as
    pygame_freetype`, `from matplotlib import pyplot`)."""
    names: set[str] = set()
    for stmt in module.body:
        if isinstance(stmt, ast.Import):
            names |= {
                alias.asname or alias.name.split(".")[0]
                for alias in stmt.names
                if alias.name.split(".")[0] in DRAWING_PACKAGES
            }
        elif (
            isinstance(stmt, ast.ImportFrom)
            and stmt.module
            and not stmt.level
            and stmt.module.split(".")[0] in DRAWING_PACKAGES
        ):
            names |= {alias.asname or alias.name for alias in stmt.names}
    return names


def _is_render_only(stmt: ast.stmt, drawing: set[str] | frozenset[str] = frozenset()) -> bool:
    """`if self.render_mode == "human": self.render()`, a bare `self.render()` call, and a
    bare call into a drawing library (`pygame_freetype.init()`)."""
    if isinstance(stmt, ast.If) and not stmt.orelse:
        return any(
            (isinstance(n, ast.Attribute) and n.attr == "render_mode")
            or (isinstance(n, ast.Name) and n.id == "render_mode")
            for n in ast.walk(stmt.test)
        )
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        func = stmt.value.func
        while isinstance(func, ast.Attribute) and isinstance(func.value, ast.Attribute):
            func = func.value
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            if func.value.id in drawing:
                return True
            return func.value.id == "self" and func.attr in ("render", "close")
        return isinstance(func, ast.Name) and func.id in drawing
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


class Slicer:
    def __init__(
        self,
        modules: list[Module],
        harness_attributes: set[str],
        resolver: ImportResolver | None = None,
        cut: Collection[tuple[str, ...]] = (),
    ) -> None:
        self.modules = {m.name: m for m in modules}
        # (module, name) and (module, class, method) the spec cuts: never kept, so what
        # only they use is not kept either.
        self.cut = set(cut)
        # Attributes the harness reads from the env (`unwrapped.state`): always kept.
        self.harness_attributes = harness_attributes
        self.types = Types(self.modules, resolver or ImportResolver(list(self.modules)))
        self.kept: dict[str, set[str]] = {m.name: set() for m in modules}
        self.kept_methods: dict[tuple[str, str], set[str]] = {}
        self.dropped: set[ast.stmt] = set()
        self._queue: list[tuple[str, ast.AST, ast.ClassDef | None]] = []
        # Methods called on a value of unknown type (`fwd_cell.toggle(...)`): kept in every
        # kept class that defines one of that name (duck typing, as Python resolves it).
        self.duck: set[str] = set()
        # Module -> prefixes of modules it loads by a computed name, none of them listed.
        self.unlisted: dict[str, set[str]] = {}

    # --- reachability -------------------------------------------------------------------

    def keep_name(self, module: str, name: str) -> None:
        bindings = self.modules[module].bindings
        if name not in bindings and self._keep_starred(module, name):
            return
        if name not in bindings and DYNAMIC in bindings:
            name = DYNAMIC  # a name only a `globals()[...]` store can have made
        node = bindings.get(name)
        if node is None or name in self.kept[module] or (module, name) in self.cut:
            return
        self.kept[module].add(name)
        if isinstance(node, ast.ImportFrom):
            # A name imported from another source module, directly or through a package's
            # re-export: keep its definition there too.
            for alias in node.names:
                if (alias.asname or alias.name) == name:
                    found = self.types.defining(module, node, alias.name)
                    if found is not None:
                        self.keep_name(*found)
        if isinstance(node, ast.ClassDef):
            self._keep_class(module, node)
        else:
            self._queue.append((module, node, None))

    def _keep_starred(self, module: str, name: str) -> bool:
        """`name` from a listed module through `from .constants import *`: its definition
        there and the star import are kept. False when no star import binds it."""
        for node in self.modules[module].tree.body:
            if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
                found = self.types.defining(module, node, name)
                if found is not None:
                    self.kept[module].add("*")
                    self.keep_name(*found)
                    return True
        return False

    def _keep_class(self, module: str, cls: ast.ClassDef) -> None:
        self.kept_methods.setdefault((module, cls.name), set())
        for part in [*cls.bases, *cls.keywords, *cls.decorator_list]:
            self._queue.append((module, part, None))
        for stmt in cls.body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            if set(bound_names(stmt)) & CUT_CLASS_ATTRIBUTES or stmt is docstring(cls.body):
                continue
            self._queue.append((module, stmt, cls))
        # Python calls a class's special methods for it (`world[pos]`, `view()`): kept
        # with the class, as its roots are.
        special = [n for n in methods_of(cls) if n.startswith("__") and n.endswith("__")]
        for name in dict.fromkeys([*ROOTS, *special]):
            self.keep_method(module, cls, name)

    def keep_method(self, module: str, cls: ast.ClassDef, name: str) -> None:
        """`name` on an instance of `cls`: its own method, else the one it inherits."""
        self.keep_name(module, cls.name)
        for owner, ancestor in self.types.lineage(module, cls):
            method = methods_of(ancestor).get(name)
            if method is None:
                continue
            if (owner, ancestor.name, name) in self.cut:
                return
            kept = self.kept_methods.setdefault((owner, ancestor.name), set())
            if name not in kept:
                self.keep_name(owner, ancestor.name)
                kept.add(name)
                self._queue.append((owner, method, ancestor))
            return

    def run(self) -> None:
        while True:
            while self._queue:
                module, node, cls = self._queue.pop()
                if node not in self.dropped:
                    self._visit(module, node, cls)
            if not self._dispatch():
                return

    def _visit(self, module: str, node: ast.AST, cls: ast.ClassDef | None) -> None:
        for name in _names_loaded(node, self.dropped):
            self.keep_name(module, name)
        local = self.types.local_modules(node)
        for part in walk_kept(node, self.dropped):
            if isinstance(part, ast.Call):
                self._note_unlisted(module, part)
            if not (isinstance(part, ast.Attribute) and isinstance(part.ctx, ast.Load)):
                continue
            value = part.value
            if isinstance(value, ast.Name) and value.id == "self":
                if cls is not None:
                    self.keep_method(module, cls, part.attr)
                continue
            used = self.types.module_name(module, part, local)
            if used:
                # `mod.Env` on a module (an import, an `import_module` result): keep `Env`.
                for owner, name in used:
                    self.keep_name(owner, name)
                continue
            classes = self.types.of(module, value, cls, local)
            if classes is not None:
                for owner, found in classes:
                    self.keep_method(owner, found, part.attr)
            elif not self.types.is_module_path(module, value, local):
                # Not a module's attribute (`np.zeros`), so possibly a method of a kept class.
                self.duck.add(part.attr)

    def _note_unlisted(self, module: str, call: ast.Call) -> None:
        """An `import_module` call with a computed name under a prefix no listed module is
        in: the rules it loads reach no prompt (`envport check` says so)."""
        loaded = import_call(call)
        if loaded is not None and not loaded[1] and not self.types.resolver.candidates(*loaded):
            self.unlisted.setdefault(module, set()).add(loaded[0])

    def _dispatch(self) -> bool:
        """Classes and methods a port needs though nothing named them: a kept class's
        subclasses, its overrides of what its ancestors keep (`reset` calls
        `self._gen_grid`, a subclass defines it), and those called on values of unknown
        type. True if any was added."""
        before = len(self._queue)
        # A subclass of a kept class may be what the base is used as (the grid holds any
        # WorldObj; the harness writes a Lava or a Box there): it is kept too.
        for source in self.modules.values():
            for node in source.tree.body:
                if isinstance(node, ast.ClassDef) and node.name not in self.kept[source.name]:
                    lineage = self.types.lineage(source.name, node)[1:]
                    if any(a.name in self.kept[o] for o, a in lineage):
                        self.keep_name(source.name, node.name)
        for (module, name), kept in list(self.kept_methods.items()):
            cls = self.modules[module].bindings[name]
            assert isinstance(cls, ast.ClassDef)
            inherited: set[str] = set()
            for owner, ancestor in self.types.lineage(module, cls):
                inherited |= self.kept_methods.get((owner, ancestor.name), set())
            for method in methods_of(cls):
                if (module, name, method) in self.cut:
                    continue
                if method not in kept and (method in inherited or method in self.duck):
                    kept.add(method)
                    self._queue.append((module, methods_of(cls)[method], cls))
        return len(self._queue) > before

    # --- statements that only feed rendering ---------------------------------------------

    def drop_render_statements(self) -> None:
        for module, cls_name in self.kept_methods:
            cls = self.modules[module].bindings[cls_name]
            assert isinstance(cls, ast.ClassDef)
            methods = methods_of(cls)
            kept = [methods[n] for n in sorted(self.kept_methods[(module, cls_name)])]
            cut = [m for n, m in methods.items() if n not in self.kept_methods[(module, cls_name)]]
            # What cut methods read or write: rendering's own attributes (`self.screen`).
            touched_by_cut = set().union(
                *(_self_attributes(m, ast.Load) | _self_attributes(m, ast.Store) for m in cut)
            )
            drawing = drawing_names(self.modules[module].tree)
            for method in kept:
                render_only = {s for s in _statements(method.body) if _is_render_only(s, drawing)}
                self.dropped |= render_only
                # `if self.render_mode == ...`: what such a statement reads is rendering's.
                for stmt in render_only:
                    touched_by_cut |= {
                        n.attr
                        for n in ast.walk(stmt)
                        if isinstance(n, ast.Attribute)
                        and isinstance(n.value, ast.Name)
                        and n.value.id == "self"
                    }
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
                    and set(bound_names(s)) <= touched_by_cut - read - self.harness_attributes
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
