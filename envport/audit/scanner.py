"""Scan one function body for blocking calls and for calls into same-module sync helpers.

What runs on the event loop is the function's own body: nested `def`s and classes run
only when called (a call to a nested sync def is followed as a helper), and a lambda
runs inline (e.g. a `sorted` key) unless it is handed to `asyncio.to_thread` or
`run_in_executor`. Arguments of an offload call are still evaluated on the loop, so
`asyncio.to_thread(json.dumps(big))` is still flagged.

CPU-heavy loop heuristic (medium): a comprehension with two or more `for` clauses,
counting comprehensions nested in it (a cross product or a scan of a scan, flagged once
at the outermost one), or a comprehension or `for` loop over `range(N)` with a literal
N of at least 100,000. A single `for` over a variable is not flagged: its cost depends
on data the audit cannot see.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from envport.audit import catalog
from envport.audit.catalog import Rule
from envport.audit.index import FunctionInfo
from envport.audit.resolve import (
    BuiltinRef,
    Callee,
    HelperRef,
    InstanceRef,
    MethodRef,
    ModuleRef,
    Resolver,
)

_Comprehension = ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp


@dataclass(frozen=True)
class Hit:
    """A blocking call (or loop) found in one function body."""

    node: ast.expr | ast.stmt
    rule: Rule
    call: str


@dataclass(frozen=True)
class HelperCall:
    """A direct call into a sync function of the same module."""

    node: ast.Call
    function: FunctionInfo


@dataclass(frozen=True)
class Scan:
    hits: list[Hit]
    helper_calls: list[HelperCall]


def scan_function(resolver: Resolver, fn: FunctionInfo) -> Scan:
    scanner = _BodyScanner(resolver, fn)
    for stmt in fn.node.body:
        scanner.visit(stmt)
    return Scan(scanner.hits, scanner.helper_calls)


class _BodyScanner(ast.NodeVisitor):
    def __init__(self, resolver: Resolver, fn: FunctionInfo) -> None:
        self.resolver = resolver
        self.fn = fn
        self.hits: list[Hit] = []
        self.helper_calls: list[HelperCall] = []
        self._loop_depth = 0
        self._in_heavy_loop = False

    @contextmanager
    def _loop(self) -> Iterator[None]:
        self._loop_depth += 1
        try:
            yield
        finally:
            self._loop_depth -= 1

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        return None

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        return None

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        return None

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self.visit(node.body)

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        self.visit(node.iter)
        if not self._in_heavy_loop and self._is_large_range(node.iter):
            self.hits.append(Hit(node, catalog.CPU_HEAVY_LOOP, "loop"))
        with self._loop():
            self.visit(node.target)
            for stmt in node.body:
                self.visit(stmt)
        for stmt in node.orelse:
            self.visit(stmt)

    visit_AsyncFor = visit_For

    def visit_While(self, node: ast.While) -> None:
        with self._loop():
            self.visit(node.test)
            for stmt in node.body:
                self.visit(stmt)
        for stmt in node.orelse:
            self.visit(stmt)

    def _visit_comprehension(self, node: _Comprehension) -> None:
        outer_heavy = self._in_heavy_loop
        if not outer_heavy and self._is_heavy_comprehension(node):
            self.hits.append(Hit(node, catalog.CPU_HEAVY_LOOP, "comprehension"))
            self._in_heavy_loop = True
        # The first iterable is evaluated once; everything else once per iteration.
        first, *rest = node.generators
        self.visit(first.iter)
        with self._loop():
            self.visit(first.target)
            for condition in first.ifs:
                self.visit(condition)
            for generator in rest:
                self.visit(generator)
            elements = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
            for element in elements:
                self.visit(element)
        self._in_heavy_loop = outer_heavy

    visit_ListComp = _visit_comprehension
    visit_SetComp = _visit_comprehension
    visit_DictComp = _visit_comprehension
    visit_GeneratorExp = _visit_comprehension

    def visit_Call(self, node: ast.Call) -> None:
        callee = self.resolver.callee(node.func, self.fn)
        self._record(node, callee)
        offload = _is_offload(node, callee)
        self.visit(node.func)
        for argument in [*node.args, *(keyword.value for keyword in node.keywords)]:
            if offload and isinstance(argument, ast.Lambda):
                continue  # its body runs in the worker thread
            self.visit(argument)

    def _record(self, node: ast.Call, callee: Callee | None) -> None:
        if isinstance(callee, HelperRef):
            if not callee.function.is_async:
                self.helper_calls.append(HelperCall(node, callee.function))
            return
        found = self._rule_for(node, callee)
        if found is not None:
            rule, call = found
            self.hits.append(Hit(node, rule, call))

    def _rule_for(self, node: ast.Call, callee: Callee | None) -> tuple[Rule, str] | None:
        match callee:
            case ModuleRef(qualname=qualname):
                return self._module_rule(node, qualname)
            case BuiltinRef(name=name):
                rule = catalog.BUILTIN_CALLS.get(name)
                return (rule, name) if rule else None
            case InstanceRef(kind=catalog.PATH, attrs=attrs):
                derived = all(attr in catalog.PATH_DERIVING_ATTRIBUTES for attr in attrs[:-1])
                rule = catalog.PATH_METHODS.get(attrs[-1]) if derived else None
                return (rule, f"Path.{attrs[-1]}") if rule else None
            case InstanceRef(kind=kind, attrs=attrs, fresh=False):
                rule = catalog.MODULE_CALLS.get(kind)
                return (rule, ".".join((kind, *attrs))) if rule else None
            case MethodRef(name=name) if name in catalog.PATH_ONLY_METHODS:
                return catalog.FILE_IO, f"Path.{name}"
            case MethodRef(name=catalog.MODEL_COPY_METHOD):
                rule = catalog.DEEP_COPY if _asks_deep_copy(node) else catalog.SHALLOW_MODEL_COPY
                return rule, f".{catalog.MODEL_COPY_METHOD}"
        # A fresh client's method call is covered by the finding on its constructor.
        return None

    def _module_rule(self, node: ast.Call, qualname: str) -> tuple[Rule, str] | None:
        if qualname == catalog.REGEX_COMPILE:
            return (catalog.REGEX_IN_LOOP, qualname) if self._loop_depth else None
        if qualname in catalog.SERIALIZERS:
            if is_trivial_payload(_payload(node)):
                return None
            return catalog.SERIALIZATION, qualname
        rule = catalog.module_call_rule(qualname)
        return (rule, qualname) if rule else None

    def _is_heavy_comprehension(self, node: _Comprehension) -> bool:
        generators = [
            generator
            for inner in ast.walk(node)
            if isinstance(inner, _Comprehension)
            for generator in inner.generators
        ]
        if len(generators) >= catalog.NESTED_LOOPS:
            return True
        return any(self._is_large_range(generator.iter) for generator in generators)

    def _is_large_range(self, iterable: ast.expr) -> bool:
        if not isinstance(iterable, ast.Call) or not iterable.args:
            return False
        if self.resolver.callee(iterable.func, self.fn) != BuiltinRef("range"):
            return False
        stop = iterable.args[0] if len(iterable.args) == 1 else iterable.args[1]
        return (
            isinstance(stop, ast.Constant)
            and isinstance(stop.value, int)
            and stop.value >= catalog.LARGE_RANGE
        )


def _is_offload(node: ast.Call, callee: Callee | None) -> bool:
    if isinstance(callee, ModuleRef) and callee.qualname in catalog.OFFLOAD_FUNCTIONS:
        return True
    return isinstance(node.func, ast.Attribute) and node.func.attr in catalog.OFFLOAD_METHODS


def _asks_deep_copy(node: ast.Call) -> bool:
    """`deep=` set to anything but a literal False (a variable may well be True)."""
    for keyword in node.keywords:
        if keyword.arg == "deep":
            value = keyword.value
            return not (isinstance(value, ast.Constant) and value.value is False)
        if keyword.arg is None:
            return True  # `**options` may carry deep=True
    return False


def _payload(node: ast.Call) -> ast.expr | None:
    """The argument a serialiser encodes or decodes: the first positional one, else the
    keyword it is passed by; `*args`/`**kwargs` count as unknown (non-trivial)."""
    if node.args:
        return node.args[0]
    for keyword in node.keywords:
        if keyword.arg is None or keyword.arg in catalog.PAYLOAD_KEYWORDS:
            return keyword.value
    return None


def is_trivial_payload(payload: ast.expr | None) -> bool:
    """Whether a serialiser's payload is written out in the source: a constant, or a
    tuple/list/set/dict display built only from constants. Its size is bounded by the
    source, so serialising it cannot stall the loop. Anything else (a name, an attribute,
    a call, an f-string) may hold an observation batch or a whole state and is flagged.
    """
    if payload is None:
        return True
    if isinstance(payload, ast.Constant):
        return True
    if isinstance(payload, ast.UnaryOp):
        return isinstance(payload.operand, ast.Constant)
    if isinstance(payload, ast.Tuple | ast.List | ast.Set):
        return all(is_trivial_payload(element) for element in payload.elts)
    if isinstance(payload, ast.Dict):
        return all(key is not None and is_trivial_payload(key) for key in payload.keys) and all(
            is_trivial_payload(value) for value in payload.values
        )
    return False
