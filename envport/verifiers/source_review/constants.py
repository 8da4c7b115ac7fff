"""The strings an expression can take, read off the syntax tree, when the review can list
them: `getattr(state, f"_{name}") for name in FIELDS` names only the attributes FIELDS
lists, each judged like a written `.attr`; anything the review cannot list is not admitted.
"""

from __future__ import annotations

import ast
import itertools
from collections import Counter

# Beyond this many values (an f-string of several loops) the review stops listing.
MAX_VALUES = 4096
_DEPTH = 16


def stores(tree: ast.AST) -> Counter[str]:
    """How often each name is bound anywhere in the file (assignments, loops, parameters,
    imports, definitions): a module constant is a name bound exactly once."""
    counted: Counter[str] = Counter()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            counted[node.id] += 1
        elif isinstance(node, ast.arg):
            counted[node.arg] += 1
        elif isinstance(node, ast.alias):
            counted[node.asname or node.name.split(".")[0]] += 1
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            counted[node.name] += 1
        elif isinstance(node, ast.Global | ast.Nonlocal):
            counted.update({name: 2 for name in node.names})
    return counted


# Where a mutable constant (a list, set or dict literal) is only read: iterated, indexed,
# asked for its keys, tested for membership, or handed to a builtin that copies or counts.
_READ_METHODS = frozenset({"items", "keys", "values", "get", "copy", "count", "index"})
_READING_CALLS = frozenset(
    {"len", "sorted", "tuple", "list", "set", "frozenset", "dict", "enumerate", "zip",
     "reversed", "any", "all", "sum", "min", "max", "iter"}
)  # fmt: skip


def identifiers(tree: ast.AST) -> set[str]:
    """Every name a file uses (names, attributes, imported names): what another file of
    the port could reach one of this file's constants by."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, ast.alias):
            found.add(node.name)
    return found


def _only_read(tree: ast.AST, name: str) -> bool:
    """Whether every use of `name` in the file only reads it (never `X.append(...)`,
    `X[k] = v`, `y = X` or `f(X)`, which could change what it holds)."""
    parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Name) and node.id == name):
            continue
        parent = parents.get(id(node))
        grand = parents.get(id(parent)) if parent is not None else None
        read = (
            (isinstance(parent, ast.For | ast.comprehension) and parent.iter is node)
            or (isinstance(parent, ast.Subscript) and isinstance(parent.ctx, ast.Load))
            or (isinstance(parent, ast.Compare) and node in parent.comparators)
            or (isinstance(parent, ast.Starred) and isinstance(grand, ast.Tuple | ast.List))
            or (
                isinstance(parent, ast.Attribute)
                and parent.attr in _READ_METHODS
                and isinstance(grand, ast.Call)
                and grand.func is parent
            )
            or (
                isinstance(parent, ast.Call)
                and isinstance(parent.func, ast.Name)
                and parent.func.id in _READING_CALLS
                and node in parent.args
            )
        )
        if not read and not (isinstance(parent, ast.Assign) and parent.targets[0] is node):
            return False
    return True


def _frozen(value: ast.expr, frozen: set[str]) -> bool:
    """A value nothing can change: a string, or a tuple of frozen values."""
    if isinstance(value, ast.Constant):
        return True
    if isinstance(value, ast.Tuple):
        return all(_frozen(element, frozen) for element in value.elts)
    if isinstance(value, ast.Starred):
        return _frozen(value.value, frozen)
    return isinstance(value, ast.Name) and value.id in frozen


def _flat(value: ast.expr, frozen: set[str]) -> bool:
    """A list, set or dict literal whose listed strings are frozen (its items, its keys)."""
    if isinstance(value, ast.List | ast.Set):
        return all(_frozen(element, frozen) for element in value.elts)
    if isinstance(value, ast.Dict):
        return all(key is not None and _frozen(key, frozen) for key in value.keys)
    return False


def module_constants(
    tree: ast.Module, elsewhere: frozenset[str] = frozenset()
) -> dict[str, ast.expr]:
    """Module-level names assigned once and bound nowhere else in the file, whose strings
    cannot change: tuples and strings, and list, set or dict literals the file only reads
    and no other file of the port names (`elsewhere`)."""
    counted = stores(tree)
    found: dict[str, ast.expr] = {}
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target = statement.targets[0]
            if not (isinstance(target, ast.Name) and counted[target.id] == 1):
                continue
            name, value = target.id, statement.value
            only_read = name not in elsewhere and _only_read(tree, name)
            if _frozen(value, set(found)) or (_flat(value, set(found)) and only_read):
                found[name] = value
    return found


def rebound(body: list[ast.stmt] | list[ast.expr], name: str) -> bool:
    """Whether a loop's body binds its variable again (then its values are unknown)."""
    for statement in body:
        for node in ast.walk(statement):
            if (
                isinstance(node, ast.Name)
                and node.id == name
                and not isinstance(node.ctx, ast.Load)
            ):
                return True
            if isinstance(node, ast.Global | ast.Nonlocal) and name in node.names:
                return True
    return False


def loop_names(target: ast.expr, iterable: ast.expr) -> dict[str, ast.expr]:
    """What a loop binds to values the review may list: `for name in X` (X's items) and
    `for name, value in X.items()` (X's keys)."""
    if isinstance(target, ast.Name):
        return {target.id: iterable}
    if not (isinstance(target, ast.Tuple) and target.elts):
        return {}
    first = target.elts[0]
    if (
        isinstance(first, ast.Name)
        and isinstance(iterable, ast.Call)
        and isinstance(iterable.func, ast.Attribute)
        and iterable.func.attr == "items"
        and not iterable.args
    ):
        return {first.id: iterable.func.value}
    return {}


class Strings:
    """Lists the values of string expressions of one file."""

    def __init__(self, constants: dict[str, ast.expr]) -> None:
        self.constants = constants

    def values(
        self, node: ast.expr, loops: list[dict[str, ast.expr | None]], depth: int = 0
    ) -> set[str] | None:
        """Every string `node` can be (a sequence's items, a dict's keys), or None when
        the review cannot list them."""
        if depth > _DEPTH:
            return None
        again = lambda child: self.values(child, loops, depth + 1)  # noqa: E731
        if isinstance(node, ast.Constant):
            return {node.value} if isinstance(node.value, str) else None
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            return _union([again(element) for element in node.elts])
        if isinstance(node, ast.Starred):
            return again(node.value)
        if isinstance(node, ast.Dict):
            return _union([again(key) if key is not None else None for key in node.keys])
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in ("keys", "items") and not node.args:
                return again(node.func.value)
            return None
        if isinstance(node, ast.Name):
            for scope in reversed(loops):
                if node.id in scope:
                    bound = scope[node.id]
                    return None if bound is None else again(bound)
            constant = self.constants.get(node.id)
            return None if constant is None else again(constant)
        if isinstance(node, ast.JoinedStr):
            parts: list[set[str] | None] = []
            for part in node.values:
                if isinstance(part, ast.FormattedValue):
                    plain = part.conversion == -1 and part.format_spec is None
                    parts.append(again(part.value) if plain else None)
                else:
                    parts.append(again(part))
            return _product(parts)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return _product([again(node.left), again(node.right)])
        return None


def _union(parts: list[set[str] | None]) -> set[str] | None:
    if any(part is None for part in parts):
        return None
    return set().union(*(part for part in parts if part is not None))


def _product(parts: list[set[str] | None]) -> set[str] | None:
    known = [part for part in parts if part is not None]
    if len(known) < len(parts):
        return None
    size = 1
    for part in known:
        size *= len(part)
    if size > MAX_VALUES:
        return None
    return {"".join(combination) for combination in itertools.product(*known)}
