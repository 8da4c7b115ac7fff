"""Resolve what a call's callee stands for: an import, a builtin, a same-module helper,
or a method on an instance whose type the module makes evident.

Instance types are tracked only for the kinds the checks care about (paths and sync
clients) and only through evident bindings: `p = Path(...)`, `with httpx.Client() as c`,
`self.client = OpenAI()` in any method of the class, and parameters annotated with one
of those types. A name bound to different kinds in one scope is left untyped.
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass

from envport.audit import catalog
from envport.audit.index import ClassInfo, FunctionInfo, ModuleIndex, scope_nodes

_BUILTIN_NAMES = frozenset(dir(builtins))
_OPTIONAL_TYPES = frozenset(["typing.Optional", "typing.Union"])


@dataclass(frozen=True)
class ModuleRef:
    """A dotted name reached through an import, e.g. `time.sleep`."""

    qualname: str


@dataclass(frozen=True)
class BuiltinRef:
    name: str


@dataclass(frozen=True)
class HelperRef:
    """A function defined in the module being audited."""

    function: FunctionInfo


@dataclass(frozen=True)
class InstanceRef:
    """`attrs` looked up on an instance of `kind`; `fresh` when the instance is built in
    the same expression, e.g. `httpx.Client().get(...)`."""

    kind: str
    attrs: tuple[str, ...]
    fresh: bool


@dataclass(frozen=True)
class MethodRef:
    """A method call on a receiver of unknown type: only its name is known."""

    name: str


@dataclass(frozen=True)
class LocalRef:
    kind: str | None


Callee = ModuleRef | BuiltinRef | HelperRef | InstanceRef | MethodRef


class Resolver:
    """Name and type resolution over one module, cached per scope."""

    def __init__(self, index: ModuleIndex) -> None:
        self.index = index
        self._local_kinds: dict[FunctionInfo, dict[str, str | None]] = {}
        self._class_kinds: dict[ClassInfo, dict[str, str | None]] = {}

    def callee(self, expr: ast.expr, fn: FunctionInfo | None) -> Callee | None:
        if isinstance(expr, ast.Name):
            ref = self.name(expr.id, fn)
            return None if isinstance(ref, LocalRef) else ref
        if not isinstance(expr, ast.Attribute):
            return None
        attrs: list[str] = []
        base: ast.expr = expr
        while isinstance(base, ast.Attribute):
            attrs.insert(0, base.attr)
            base = base.value
        if isinstance(base, ast.Name):
            return self._attribute_callee(base.id, tuple(attrs), fn)
        kind = self.kind(base, fn)
        if kind is not None:
            return InstanceRef(kind, tuple(attrs), fresh=isinstance(base, ast.Call))
        return MethodRef(attrs[-1])

    def _attribute_callee(
        self, base: str, attrs: tuple[str, ...], fn: FunctionInfo | None
    ) -> Callee | None:
        receiver = _receiver(fn)
        if receiver is not None and base == receiver[0]:
            owner = receiver[1]
            method = owner.methods.get(attrs[0])
            if len(attrs) == 1 and method is not None:
                return HelperRef(method)
            kind = self.class_kinds(owner).get(attrs[0])
            if kind is not None and len(attrs) > 1:
                return InstanceRef(kind, attrs[1:], fresh=False)
            return MethodRef(attrs[-1])
        ref = self.name(base, fn)
        if isinstance(ref, ModuleRef):
            return ModuleRef(".".join((ref.qualname, *attrs)))
        if isinstance(ref, LocalRef) and ref.kind is not None:
            return InstanceRef(ref.kind, attrs, fresh=False)
        return MethodRef(attrs[-1])

    def name(
        self, name: str, fn: FunctionInfo | None
    ) -> ModuleRef | BuiltinRef | HelperRef | LocalRef | None:
        scope = fn
        while scope is not None:
            if name in scope.imports:
                return ModuleRef(scope.imports[name])
            if name in scope.nested:
                return HelperRef(scope.nested[name])
            if name in scope.local_names:
                return LocalRef(self.local_kinds(scope).get(name))
            scope = scope.parent
        if name in self.index.imports:
            return ModuleRef(self.index.imports[name])
        if name in self.index.functions:
            return HelperRef(self.index.functions[name])
        if name in self.index.global_names:
            return None
        if name in _BUILTIN_NAMES:
            return BuiltinRef(name)
        return None

    def kind(self, expr: ast.expr, fn: FunctionInfo | None) -> str | None:
        """The tracked kind (a path or a sync client class) of `expr`, if evident."""
        if isinstance(expr, ast.Call):
            return self._constructed_kind(expr, fn)
        if isinstance(expr, ast.Name):
            ref = self.name(expr.id, fn)
            return ref.kind if isinstance(ref, LocalRef) else None
        if isinstance(expr, ast.Attribute):
            receiver = _receiver(fn)
            if (
                receiver is not None
                and isinstance(expr.value, ast.Name)
                and expr.value.id == receiver[0]
            ):
                return self.class_kinds(receiver[1]).get(expr.attr)
            if expr.attr in catalog.PATH_DERIVING_ATTRIBUTES:
                return catalog.PATH if self.kind(expr.value, fn) == catalog.PATH else None
            return None
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Div):
            return catalog.PATH if self.kind(expr.left, fn) == catalog.PATH else None
        if isinstance(expr, ast.IfExp):
            # `Path(p) if p is not None else None`: a None branch does not change the kind.
            branches = [b for b in (expr.body, expr.orelse) if not _is_none(b)]
            kinds = {self.kind(branch, fn) for branch in branches}
            return kinds.pop() if len(kinds) == 1 else None
        return None

    def _constructed_kind(self, call: ast.Call, fn: FunctionInfo | None) -> str | None:
        callee = self.callee(call.func, fn)
        if isinstance(callee, ModuleRef):
            return _kind_of_type(callee.qualname)
        if (
            isinstance(callee, InstanceRef)
            and callee.kind == catalog.PATH
            and callee.attrs[-1] in catalog.PATH_DERIVING_METHODS
            and all(attr in catalog.PATH_DERIVING_ATTRIBUTES for attr in callee.attrs[:-1])
        ):
            return catalog.PATH
        return None

    def annotation_kind(self, annotation: ast.expr | None, fn: FunctionInfo | None) -> str | None:
        if annotation is None:
            return None
        if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
            # `Path | None`
            return self.annotation_kind(annotation.left, fn) or self.annotation_kind(
                annotation.right, fn
            )
        if isinstance(annotation, ast.Subscript):
            # `Optional[Path]`, `Union[Path, str]`; not `list[Path]`, which is no path.
            wrapper = self.callee(annotation.value, fn)
            if not (isinstance(wrapper, ModuleRef) and wrapper.qualname in _OPTIONAL_TYPES):
                return None
            members = annotation.slice
            options = members.elts if isinstance(members, ast.Tuple) else [members]
            kinds = {self.annotation_kind(option, fn) for option in options} - {None}
            return kinds.pop() if len(kinds) == 1 else None
        callee = self.callee(annotation, fn)
        return _kind_of_type(callee.qualname) if isinstance(callee, ModuleRef) else None

    def local_kinds(self, fn: FunctionInfo) -> dict[str, str | None]:
        if fn in self._local_kinds:
            return self._local_kinds[fn]
        # Registered before it is filled: a binding that refers to an earlier one in the
        # same scope sees the partial map instead of recursing forever.
        kinds: dict[str, str | None] = {}
        self._local_kinds[fn] = kinds
        args = fn.node.args
        for param in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
            kinds[param.arg] = self.annotation_kind(param.annotation, fn.parent)
        for target, value in _bindings(fn.node.body):
            kind = self._binding_kind(value, fn)
            _bind(kinds, target, kind)
        return kinds

    def class_kinds(self, owner: ClassInfo) -> dict[str, str | None]:
        if owner in self._class_kinds:
            return self._class_kinds[owner]
        kinds: dict[str, str | None] = {}
        self._class_kinds[owner] = kinds
        # A declared attribute type (`client: httpx.Client` in the class body) wins over
        # whatever the assignments in methods make evident.
        declared: dict[str, str | None] = {}
        for stmt in owner.node.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                _bind(declared, stmt.target.id, self.annotation_kind(stmt.annotation, None))
        for method in owner.methods.values():
            receiver = method.receiver
            for node in scope_nodes(method.node.body):
                if not isinstance(node, ast.Assign | ast.AnnAssign) or node.value is None:
                    continue
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if (
                        isinstance(target, ast.Attribute)
                        and isinstance(target.value, ast.Name)
                        and target.value.id == receiver
                    ):
                        _bind(kinds, target.attr, self.kind(node.value, method))
        kinds.update({name: kind for name, kind in declared.items() if kind is not None})
        return kinds

    def _binding_kind(self, value: ast.expr | None, fn: FunctionInfo) -> str | None:
        return None if value is None else self.kind(value, fn)


def _bind(kinds: dict[str, str | None], name: str, kind: str | None) -> None:
    # Only a name every binding agrees on gets a kind.
    if name in kinds and kinds[name] != kind:
        kinds[name] = None
    else:
        kinds[name] = kind


def _bindings(body: list[ast.stmt]) -> list[tuple[str, ast.expr | None]]:
    """(name, bound value) for each name binding of a scope, in source order; the value
    is None where the binding is not a plain assignment (loop targets, unpacking)."""
    found: list[tuple[int, int, str, ast.expr | None]] = []
    valued: set[int] = set()
    for node in scope_nodes(body):
        pairs: list[tuple[ast.expr, ast.expr | None]] = []
        if isinstance(node, ast.Assign):
            pairs = [(target, node.value) for target in node.targets]
        elif isinstance(node, ast.AnnAssign):
            if node.value is None:
                # A bare annotation binds nothing at run time.
                valued.add(id(node.target))
                continue
            pairs = [(node.target, node.value)]
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            pairs = [(node.optional_vars, node.context_expr)]
        for target, value in pairs:
            if isinstance(target, ast.Name):
                valued.add(id(target))
                found.append((target.lineno, target.col_offset, target.id, value))
    for node in scope_nodes(body):
        if (
            isinstance(node, ast.Name)
            and isinstance(node.ctx, ast.Store)
            and id(node) not in valued
        ):
            found.append((node.lineno, node.col_offset, node.id, None))
    found.sort(key=lambda binding: (binding[0], binding[1]))
    return [(name, value) for _, _, name, value in found]


def _is_none(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Constant) and expr.value is None


def _kind_of_type(qualname: str) -> str | None:
    if qualname in catalog.PATH_CONSTRUCTORS:
        return catalog.PATH
    return catalog.CLIENT_CONSTRUCTORS.get(qualname)


def _receiver(fn: FunctionInfo | None) -> tuple[str, ClassInfo] | None:
    """`self` (or `cls`) and its class, also from functions nested in a method."""
    scope = fn
    while scope is not None:
        if scope.owner is not None:
            receiver = scope.receiver
            return (receiver, scope.owner) if receiver is not None else None
        scope = scope.parent
    return None
