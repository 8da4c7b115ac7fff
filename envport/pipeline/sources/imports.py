"""How one source module names another, for the slicer (reach.py): relative imports
made absolute, a package's re-exports followed to the module that defines the name, and
`import_module` / `__import__` calls whose argument folds to a constant.

Everything is read from syntax trees; a package's `__init__` that the spec does not list is
read from its file (found by the import system, never executed by this module) only to see
where it takes a re-exported name from.
"""

from __future__ import annotations

import ast
import importlib.util
from collections.abc import Callable, Collection
from dataclasses import dataclass, field

# How deep a chain of re-exports is followed (`pkg` -> `pkg.sub` -> `pkg.sub.impl`).
MAX_REEXPORTS = 8
IMPORT_FUNCTIONS = ("import_module", "__import__")


@dataclass
class Module:
    """One parsed source module; here, below the slicer's other parts, since all of them read it."""

    name: str
    lines: list[str]
    tree: ast.Module
    # Top-level name -> the statement that binds it (def, class, assignment, import).
    bindings: dict[str, ast.stmt] = field(default_factory=dict)


def read_module(name: str) -> tuple[str, bool] | None:
    """A module's source text and whether it is a package, or None when it has none."""
    try:
        found = importlib.util.find_spec(name)
    except Exception:  # a package whose own import fails: nothing to follow, said by the caller
        return None
    origin = found.origin if found is not None else None
    if origin is None or not origin.endswith(".py"):
        return None
    try:
        with open(origin, encoding="utf-8") as handle:
            return handle.read(), origin.endswith("__init__.py")
    except (OSError, UnicodeDecodeError):
        return None


def absolute(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The module an `from X import ...` statement in `module` imports from."""
    if not node.level:
        return node.module or ""
    parts = module.split(".")
    # A package's own `from . import x` is relative to itself, a module's to its package.
    base = parts[: len(parts) - node.level + (1 if is_package else 0)]
    return ".".join(base + ([node.module] if node.module else []))


def fold(expr: ast.expr | None) -> tuple[str, bool] | None:
    """A string expression's constant value (exact) or its constant prefix (not exact):
    `"a." + "b"` -> ("a.b", True); `"a." + name`, `f"a.{name}"`, `"a.%s" % name`,
    `"a.{}".format(name)` -> ("a.", False); None without one."""
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return expr.value, True
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        left = fold(expr.left)
        if left is None or not left[1]:
            return left
        right = fold(expr.right)
        if right is None:
            return left[0], False
        return left[0] + right[0], right[1]
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mod):
        # `"a.%s" % name`: what comes before the first placeholder.
        template = fold(expr.left)
        if template is None or not template[1]:
            return template
        head = template[0].split("%", 1)[0]
        return (head, False) if head else None
    if (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Attribute)
        and expr.func.attr == "format"
    ):
        # `"a.{}".format(name)`: likewise.
        template = fold(expr.func.value)
        if template is None or not template[1]:
            return template
        head = template[0].split("{", 1)[0]
        return (head, False) if head else None
    if isinstance(expr, ast.JoinedStr):
        text = ""
        for part in expr.values:
            if not (isinstance(part, ast.Constant) and isinstance(part.value, str)):
                return (text, False) if text else None
            text += part.value
        return text, True
    return None


def _keyword(call: ast.Call, name: str, position: int) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == name:
            return keyword.value
    return call.args[position] if len(call.args) > position else None


def import_call(call: ast.Call) -> tuple[str, bool] | None:
    """The module an `import_module(...)` or `__import__(...)` call loads: (name, exact), or
    (prefix, False) when only a constant prefix of its argument is known."""
    func = call.func
    called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
    if called not in IMPORT_FUNCTIONS or not call.args:
        return None
    found = fold(call.args[0])
    if found is None:
        return None
    name, exact = found
    if called == "import_module" and name.startswith(".") and exact:
        package = fold(_keyword(call, "package", 1))
        if package is None or not package[1]:
            return None
        level = len(name) - len(name.lstrip("."))
        base = package[0].split(".")[: len(package[0].split(".")) - level + 1]
        name = ".".join([*base, name.lstrip(".")]).strip(".")
    if called == "__import__" and exact and _keyword(call, "fromlist", 3) is None:
        # `__import__("a.b")` returns the top package `a`; `a.b.Env` is then used from it.
        name = name.split(".")[0]
    return name, exact


@dataclass
class ImportResolver:
    """Answers, for the slicer, which listed module defines a name another module imports."""

    listed: Collection[str]
    packages: Collection[str] = ()
    read: Callable[[str], tuple[str, bool] | None] = read_module
    _trees: dict[str, tuple[ast.Module, bool] | None] = field(default_factory=dict)

    def candidates(self, name: str, exact: bool) -> list[str]:
        """The listed modules an import of `name` may load. A prefix only (the rest computed
        at run time, `"minatar.environments." + game`) cannot be resolved: every listed
        module under it is a candidate (each is already shown, rooted in itself)."""
        if exact:
            return [name] if name in self.listed else []
        return sorted(m for m in self.listed if m.startswith(name))

    def is_module(self, name: str) -> bool:
        """A listed module, or a package some listed module is in."""
        return any(m == name or m.startswith(name + ".") for m in self.listed)

    def defining(self, module: str, name: str, depth: int = 0) -> tuple[str, str] | None:
        """The listed module that binds `name` for `from module import name`, and the name
        it binds it under there: `module` itself when listed, else followed through the
        package's re-exports, an alias renaming it (`from .dealer import LeducholdemDealer
        as Dealer`: `Dealer` is `LeducholdemDealer` in `.dealer`)."""
        if module in self.listed:
            return module, name
        if depth > MAX_REEXPORTS:
            return None
        parsed = self._tree(module)
        if parsed is None:
            return None
        tree, is_package = parsed
        found: tuple[str, str] | None = None
        for node in _top_level(tree.body):
            if not isinstance(node, ast.ImportFrom):
                continue
            source = absolute(module, is_package, node)
            for alias in node.names:
                if alias.name == "*" and self._binds(source, name):
                    found = self.defining(source, name, depth + 1)
                elif (alias.asname or alias.name) == name:
                    # `from .sub import Name` or `from . import sub` (a module, not a name).
                    found = self.defining(source, alias.name, depth + 1)
        return found

    def _binds(self, module: str, name: str) -> bool:
        parsed = self._tree(module)
        if parsed is None:
            return False
        for node in _top_level(parsed[0].body):
            if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
                return True  # a star import further on: followed by `defining`
            if name in _bound(node):
                return True
        return False

    def _tree(self, module: str) -> tuple[ast.Module, bool] | None:
        if module not in self._trees:
            read = self.read(module)
            try:
                self._trees[module] = (ast.parse(read[0]), read[1]) if read else None
            except SyntaxError:
                self._trees[module] = None
        return self._trees[module]


def _top_level(body: list[ast.stmt]) -> list[ast.stmt]:
    """A module's statements, with those inside top-level `if` and `try` blocks (a package
    that re-exports under `if TYPE_CHECKING` or `try: ... except ImportError`)."""
    out: list[ast.stmt] = []
    for node in body:
        out.append(node)
        if isinstance(node, ast.If | ast.Try):
            for part in ("body", "orelse", "finalbody"):
                out += _top_level(getattr(node, part, []))
            for handler in getattr(node, "handlers", []):
                out += _top_level(handler.body)
    return out


def _bound(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.Import | ast.ImportFrom):
        return [(a.asname or a.name).split(".")[0] for a in node.names]
    if isinstance(node, ast.Assign | ast.AnnAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    return []
