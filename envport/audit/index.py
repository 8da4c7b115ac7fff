"""An index of one module: its functions, classes, imports and the names each scope binds.

Scopes follow Python's rules closely enough for name resolution: a function sees its own
bindings, then those of enclosing functions, then the module's; class bodies are not
visible from their methods.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef
_SCOPE_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
# Nodes that bind their `name` attribute (an except handler's may be None).
_NAMED_BINDERS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ExceptHandler)


@dataclass(eq=False)
class ClassInfo:
    name: str
    qualname: str
    node: ast.ClassDef
    methods: dict[str, FunctionInfo] = field(default_factory=dict)


@dataclass(eq=False)
class FunctionInfo:
    node: FunctionNode
    qualname: str
    owner: ClassInfo | None
    parent: FunctionInfo | None
    imports: dict[str, str] = field(default_factory=dict)
    local_names: set[str] = field(default_factory=set)
    nested: dict[str, FunctionInfo] = field(default_factory=dict)

    @property
    def is_async(self) -> bool:
        return isinstance(self.node, ast.AsyncFunctionDef)

    @property
    def receiver(self) -> str | None:
        """The name of `self`/`cls` when this is a method, else None."""
        if self.owner is None or _is_staticmethod(self.node):
            return None
        params = self.node.args.posonlyargs + self.node.args.args
        return params[0].arg if params else None


@dataclass(eq=False)
class ModuleIndex:
    imports: dict[str, str] = field(default_factory=dict)
    global_names: set[str] = field(default_factory=set)
    functions: dict[str, FunctionInfo] = field(default_factory=dict)
    classes: dict[str, ClassInfo] = field(default_factory=dict)
    all_functions: list[FunctionInfo] = field(default_factory=list)
    all_classes: list[ClassInfo] = field(default_factory=list)


def build_index(tree: ast.Module) -> ModuleIndex:
    index = ModuleIndex()
    index.imports = collect_imports(tree.body)
    index.global_names = _bound_names(tree.body)
    _index_body(index, tree.body, prefix="", owner=None, parent=None)
    return index


def _index_body(
    index: ModuleIndex,
    body: list[ast.stmt],
    prefix: str,
    owner: ClassInfo | None,
    parent: FunctionInfo | None,
) -> None:
    for node in _statements(body):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            info = FunctionInfo(
                node=node,
                qualname=f"{prefix}{node.name}",
                owner=owner,
                parent=parent,
                imports=collect_imports(node.body),
                local_names=_bound_names(node.body) | _parameter_names(node.args),
            )
            index.all_functions.append(info)
            if owner is not None:
                owner.methods[node.name] = info
            elif parent is not None:
                parent.nested[node.name] = info
            else:
                index.functions[node.name] = info
            _index_body(index, node.body, f"{info.qualname}.", owner=None, parent=info)
        elif isinstance(node, ast.ClassDef):
            cls = ClassInfo(name=node.name, qualname=f"{prefix}{node.name}", node=node)
            index.all_classes.append(cls)
            if owner is None and parent is None:
                index.classes[node.name] = cls
            _index_body(index, node.body, f"{cls.qualname}.", owner=cls, parent=parent)


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements of one scope, including those inside if/try/with/for blocks."""
    for node in body:
        yield node
        if isinstance(node, _SCOPE_NODES):
            continue
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt):
                yield from _statements([child])
            elif isinstance(child, ast.ExceptHandler | ast.match_case):
                yield from _statements(child.body)


def scope_nodes(body: list[ast.stmt]) -> Iterator[ast.AST]:
    """Every node of one scope, not descending into nested functions, classes or lambdas."""
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, _SCOPE_NODES):
            continue
        stack.extend(ast.iter_child_nodes(node))


def collect_imports(body: list[ast.stmt]) -> dict[str, str]:
    """Local name -> dotted name it stands for, for the imports of one scope."""
    imports: dict[str, str] = {}
    for node in _statements(body):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    imports[alias.asname] = alias.name
                else:
                    # `import os.path` binds `os`; `os.path.exists` then resolves itself.
                    top = alias.name.split(".", 1)[0]
                    imports[top] = top
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            for alias in node.names:
                if alias.name != "*":
                    imports[alias.asname or alias.name] = f"{module}.{alias.name}"
    return imports


def _bound_names(body: list[ast.stmt]) -> set[str]:
    """Names a scope binds other than by import: assignments, loop targets, defs."""
    names: set[str] = set()
    for node in scope_nodes(body):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            names.add(node.id)
        elif isinstance(node, _NAMED_BINDERS) and node.name is not None:
            names.add(node.name)
    return names


def _parameter_names(args: ast.arguments) -> set[str]:
    params = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    params += [arg for arg in (args.vararg, args.kwarg) if arg is not None]
    return {param.arg for param in params}


def _is_staticmethod(node: FunctionNode) -> bool:
    return any(
        isinstance(decorator, ast.Name) and decorator.id == "staticmethod"
        for decorator in node.decorator_list
    )
