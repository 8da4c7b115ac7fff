"""`reference.sources`: the module defining the env class, plus the modules of its own
package that its dynamics use, found from the source's syntax tree and from the classes of
the game objects the env holds.

Dynamics are what `step` reaches: the names `step` uses, the methods and module functions
it calls (followed to a fixed point), and the same-package modules those names come from,
whose own same-package imports are followed the same way (everything but `render*`).
Rendering-only code (pygame, fonts) is never reached from `step`, so it never lands here;
nor is `reset`-only help such as option parsing: the port's reset is checked as a sample.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
from collections.abc import Sequence
from typing import Any

from envport.init.watch import chain, objects


def _tree(module_name: str) -> ast.Module | None:
    try:
        module = importlib.import_module(module_name)
        return ast.parse(inspect.getsource(module))
    except (ImportError, OSError, TypeError, SyntaxError):
        return None


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _imports(tree: ast.Module, module_name: str) -> dict[str, str]:
    """Local name -> the module it is, or the module it was imported from."""
    found: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found[alias.asname or alias.name.partition(".")[0]] = alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = module_name.split(".")
                base = ".".join(parts[: len(parts) - node.level] + ([base] if base else []))
            for alias in node.names:
                full = f"{base}.{alias.name}" if base else alias.name
                found[alias.asname or alias.name] = full if _is_module(full) else base
    return found


def _used_names(nodes: Sequence[ast.AST]) -> tuple[set[str], set[str]]:
    """Bare names and `self.x` attributes used in these nodes."""
    names: set[str] = set()
    attrs: set[str] = set()
    for root in nodes:
        for node in ast.walk(root):
            if isinstance(node, ast.Name):
                names.add(node.id)
            elif (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "self"
            ):
                attrs.add(node.attr)
    return names, attrs


def _step_reach(tree: ast.Module, class_name: str) -> set[str]:
    """Names used by `step` of `class_name` and everything it calls in this module."""
    functions = {
        n.name: n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    methods: dict[str, ast.AST] = {}
    cls = classes.get(class_name)
    if cls is not None:
        methods = {
            n.name: n for n in cls.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
        }
    if "step" not in methods:
        return set()
    todo: list[ast.AST] = [methods["step"]]
    seen_funcs: set[str] = {"step"}
    names: set[str] = set()
    while todo:
        used, attrs = _used_names([todo.pop()])
        names |= used
        for attr in attrs:
            if attr in methods and attr not in seen_funcs and not attr.startswith("render"):
                seen_funcs.add(attr)
                todo.append(methods[attr])
        for name in used:
            if name in functions and name not in seen_funcs:
                seen_funcs.add(name)
                todo.append(functions[name])
            if name in classes and name not in seen_funcs:
                seen_funcs.add(name)
                todo.append(classes[name])
    return names


def _module_reach(tree: ast.Module) -> set[str]:
    """Names a helper module uses anywhere outside `render*` functions."""
    kept = [
        n
        for n in tree.body
        if not (isinstance(n, ast.FunctionDef) and n.name.startswith("render"))
        and not isinstance(n, ast.Import | ast.ImportFrom)
    ]
    return _used_names(kept)[0]


def _same_package(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def infer_sources(env: Any) -> list[str]:
    """The env class's module first, then the same-package modules its step depends on."""
    cls = type(env.unwrapped)
    home = cls.__module__
    for klass in cls.__mro__:
        if "step" in vars(klass):
            cls_with_step = klass
            break
    else:
        return [home]
    package = home.rpartition(".")[0] or home
    sources = [home]
    start = cls_with_step.__module__
    if start != home and _same_package(start, package):
        sources.append(start)
    tree = _tree(start)
    if tree is None:
        return sources
    queue = [(start, tree, _step_reach(tree, cls_with_step.__name__))]
    # A game engine the env holds in an attribute (MinAtar's game, loaded by a computed
    # module name no import shows): the modules of the held objects' classes.
    for _, obj in objects(env)[len(chain(env)) :]:
        held = type(obj).__module__
        if _same_package(held, package) and held not in sources:
            sources.append(held)
            helper = _tree(held)
            if helper is not None:
                queue.append((held, helper, _module_reach(helper)))
    while queue:
        module_name, module_tree, used = queue.pop(0)
        for name, target in _imports(module_tree, module_name).items():
            if name not in used or not _same_package(target, package) or target in sources:
                continue
            sources.append(target)
            helper = _tree(target)
            if helper is not None:
                queue.append((target, helper, _module_reach(helper)))
    return sources
