"""A light, local inference of what a name in the reference's source refers to, for the
slicer (reach.py): which listed module a module alias or an `import_module` result
names, which class a name or `self.x` holds, and a class's ancestors among the sources.

Light on purpose: an attribute's class is known only from an assignment `self.x = Cls(...)`
in the same class (or an ancestor); anything else is of unknown type, and the slicer then
keeps methods by name (duck typing). Wrong guesses keep too much, never too little.
"""

from __future__ import annotations

import ast

from envport.pipeline.sources.imports import ImportResolver, Module, absolute, import_call

ClassRef = tuple[str, ast.ClassDef]
# A name -> the dotted module paths it may hold (several for an `import_module` call whose
# argument is only known up to a prefix).
Aliases = dict[str, list[str]]


def _chain(expr: ast.expr) -> tuple[ast.expr, list[str]]:
    """`a.b.c` -> (`a`, ["b", "c"])."""
    attributes: list[str] = []
    while isinstance(expr, ast.Attribute):
        attributes.append(expr.attr)
        expr = expr.value
    return expr, attributes[::-1]


class Types:
    def __init__(self, modules: dict[str, Module], resolver: ImportResolver) -> None:
        self.modules = modules
        self.resolver = resolver
        self._aliases: dict[str, Aliases] = {}
        self._lineage: dict[tuple[str, str], list[ClassRef]] = {}
        self._attributes: dict[tuple[str, str], dict[str, list[ClassRef]]] = {}

    # --- modules ------------------------------------------------------------------------

    def defining(self, module: str, node: ast.ImportFrom, name: str) -> tuple[str, str] | None:
        """The listed module whose definition `from X import name` in `module` binds, and
        the name it has there (another where a package re-exports it under an alias)."""
        source = absolute(module, module in self.resolver.packages, node)
        found = self.resolver.defining(source, name)
        if found is None or found[0] not in self.modules:
            return None
        return found if found[1] in self.modules[found[0]].bindings else None

    def aliases(self, module: str) -> Aliases:
        """A module's top-level names that hold modules: `import a.b` binds `a`,
        `import a.b as x` binds `x`, `from a import b` binds `b` when `a.b` is a module."""
        if module not in self._aliases:
            self._aliases[module] = self._imports(module, self.modules[module].tree.body)
        return self._aliases[module]

    def _imports(self, module: str, nodes: list[ast.stmt]) -> Aliases:
        found: Aliases = {}
        for node in nodes:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    held = alias.name if alias.asname else alias.name.split(".")[0]
                    found[alias.asname or held] = [held]
            elif isinstance(node, ast.ImportFrom):
                source = absolute(module, module in self.resolver.packages, node)
                for alias in node.names:
                    if self.resolver.is_module(f"{source}.{alias.name}"):
                        found[alias.asname or alias.name] = [f"{source}.{alias.name}"]
        return found

    def local_modules(self, node: ast.AST) -> Aliases:
        """Names a function binds to modules: `mod = import_module("a." + "b")`, and its
        own `import` statements."""
        found: Aliases = {}
        for part in ast.walk(node):
            if isinstance(part, ast.Import):
                found |= self._imports("", [part])
            if not (
                isinstance(part, ast.Assign)
                and len(part.targets) == 1
                and isinstance(part.targets[0], ast.Name)
                and isinstance(part.value, ast.Call)
            ):
                continue
            loaded = import_call(part.value)
            if loaded is not None:
                name, exact = loaded
                held = [name] if exact else self.resolver.candidates(name, exact)
                found[part.targets[0].id] = held
        return found

    def is_module_alias(self, module: str, name: str, local: Aliases) -> bool:
        """A name bound to a module, listed or not (`np`): its attributes are no methods."""
        node = self.modules[module].bindings.get(name)
        return name in local or name in self.aliases(module) or isinstance(node, ast.Import)

    def module_name(self, module: str, expr: ast.expr, local: Aliases) -> list[tuple[str, str]]:
        """The top-level names of listed modules that `alias.sub.Name` (or
        `import_module(...).Name`) names: [(module, "Name")]; empty when it names none."""
        if not isinstance(expr, ast.Attribute):
            return []
        base, attributes = _chain(expr)
        paths: list[str] = []
        if isinstance(base, ast.Name):
            paths = local.get(base.id) or self.aliases(module).get(base.id, [])
        elif isinstance(base, ast.Call) and (loaded := import_call(base)) is not None:
            paths = [loaded[0]] if loaded[1] else self.resolver.candidates(*loaded)
        found = []
        for path in paths:
            owner = ".".join([path, *attributes[:-1]])
            # `package.Name` where the package's `__init__` re-exports it from a listed
            # module (under an alias, or through further `__init__`s): that definition.
            if not self.resolver.is_module(owner):
                continue  # `np.zeros`: no listed module under it, nothing to read
            named = self.resolver.defining(owner, attributes[-1])
            if named is not None and named[0] in self.modules:
                found.append(named)
        return found

    def is_module_path(self, module: str, expr: ast.expr, local: Aliases) -> bool:
        base, _ = _chain(expr)
        return isinstance(base, ast.Name) and self.is_module_alias(module, base.id, local)

    # --- classes ------------------------------------------------------------------------

    def class_named(self, module: str, name: str, depth: int = 0) -> ClassRef | None:
        node = self.modules[module].bindings.get(name)
        if isinstance(node, ast.ClassDef):
            return module, node
        if isinstance(node, ast.ImportFrom) and depth < 8:
            for alias in node.names:
                if (alias.asname or alias.name) == name:
                    found = self.defining(module, node, alias.name)
                    if found is not None:
                        return self.class_named(*found, depth=depth + 1)
        return None

    def _classes(self, module: str, expr: ast.expr, local: Aliases) -> list[ClassRef]:
        """The classes a class expression (`Grid`, `grid.Grid`, `mod.Env`) may name."""
        if isinstance(expr, ast.Name):
            found = self.class_named(module, expr.id)
            return [found] if found else []
        named = [self.class_named(o, n) for o, n in self.module_name(module, expr, local)]
        return [c for c in named if c is not None]

    def lineage(self, module: str, cls: ast.ClassDef) -> list[ClassRef]:
        """`cls` and its ancestors defined in the sources, nearest first (MRO-like)."""
        key = (module, cls.name)
        if key not in self._lineage:
            self._lineage[key] = [(module, cls)]  # a cycle stops here
            out: list[ClassRef] = [(module, cls)]
            for base in cls.bases:
                for owner, parent in self._classes(module, base, {}):
                    out += [c for c in self.lineage(owner, parent) if c not in out]
            self._lineage[key] = out
        return self._lineage[key]

    def _attribute_types(self, module: str, cls: ast.ClassDef) -> dict[str, list[ClassRef]]:
        """`self.x = Cls(...)` in any method of `cls`: x -> the classes it holds."""
        key = (module, cls.name)
        if key not in self._attributes:
            found: dict[str, list[ClassRef]] = {}
            for method in cls.body:
                if not isinstance(method, ast.FunctionDef | ast.AsyncFunctionDef):
                    continue
                local = self.local_modules(method)
                for node in ast.walk(method):
                    if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)):
                        continue
                    classes = self._classes(module, node.value.func, local)
                    for target in node.targets:
                        if (
                            classes
                            and isinstance(target, ast.Attribute)
                            and isinstance(target.value, ast.Name)
                            and target.value.id == "self"
                        ):
                            held = found.setdefault(target.attr, [])
                            held += [c for c in classes if c not in held]
            self._attributes[key] = found
        return self._attributes[key]

    def of(
        self, module: str, expr: ast.expr, cls: ast.ClassDef | None, local: Aliases
    ) -> list[ClassRef] | None:
        """What `expr.attr` is looked up on: the classes (for `Cls.attr`, `Cls(...).attr`,
        `self.x.attr` with `self.x = Cls(...)`), or None when unknown."""
        if isinstance(expr, ast.Call):
            return self._classes(module, expr.func, local) or None
        if (
            isinstance(expr, ast.Attribute)
            and isinstance(expr.value, ast.Name)
            and expr.value.id == "self"
        ):
            if cls is None:
                return None
            for owner, ancestor in self.lineage(module, cls):
                held = self._attribute_types(owner, ancestor).get(expr.attr)
                if held:
                    return held
            return None
        return self._classes(module, expr, local) or None
