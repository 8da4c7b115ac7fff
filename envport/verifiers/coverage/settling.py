"""Branches a setting decides: tests of attributes only the env's `__init__` assigns.

CartPole's `if self.kinematics_integrator == "euler":` or Taxi's `if self.fickle_passenger
and ...` go one way for the whole run: the spec's `reference.kwargs` chose it when the env was
made, and no step can change it. Such a branch's other way is not a rule this spec's reference
has, so coverage counts it out of scope, saying which setting and its value. Only when the
setting's value, read off the reference env itself, explains the way never taken: a test whose
setting is on, yet never true, stays a gap.
"""

from __future__ import annotations

import ast
import functools
from typing import Any


def decided_by_settings(
    tree: ast.Module, line: int, never: str, env: Any, state_names: set[str]
) -> str | None:
    """Why the `if`/`while` on `line` never went the `never` way, when a setting decides it
    (a test of settings alone, or an `and`/`or` with a setting operand that short-circuits),
    else None."""
    if env is None or never not in ("never true", "never false"):
        return None
    found = _test_at(tree, line)
    if found is None:
        return None
    test, owner = found
    if owner not in {cls.__name__ for cls in type(env).__mro__}:
        return None  # `self` is another object (a grid, a cell): its settings are unknown here
    assigned = assigned_after_init(tree) | state_names
    wanted = never == "never false"  # the value that explains it: always true, or always false
    candidates = [test]
    if isinstance(test, ast.BoolOp):
        # `a and b` is never true when `a` is false; `a or b` never false when `a` is true.
        if isinstance(test.op, ast.And) and never == "never true":
            candidates += test.values
        if isinstance(test.op, ast.Or) and never == "never false":
            candidates += test.values
    for candidate in candidates:
        attributes = settings_only(candidate, assigned)
        if not attributes:
            continue
        # Safe to evaluate: `settings_only` admitted nothing but `self`'s attributes, constants,
        # comparisons and boolean operators (no call, no name but `self`, no builtins).
        try:
            value = bool(
                eval(compile(ast.Expression(candidate), "<setting>", "eval"), {}, {"self": env})
            )
        except Exception:  # an attribute the env lacks, a comparison that raises: no verdict
            continue
        if value == wanted:
            shown = ", ".join(f"`self.{a}` = {getattr(env, a, '?')!r}" for a in attributes)
            return (
                f"decided by a setting: {shown}, which only `__init__` assigns, so the spec's "
                "`reference.kwargs` fix the way it goes (envport's default)"
            )
    return None


def _test_at(tree: ast.Module, line: int) -> tuple[ast.expr, str] | None:
    """The test of the one `if`/`while` starting on `line`, and its enclosing class's name."""
    for cls in ast.walk(tree):
        if not isinstance(cls, ast.ClassDef):
            continue
        for node in ast.walk(cls):
            if isinstance(node, ast.If | ast.While) and node.lineno == line:
                return node.test, cls.name
    return None


def settings_only(test: ast.expr, assigned: frozenset[str]) -> list[str]:
    """The `self` attributes `test` reads, when it reads nothing else (constants, compared
    and combined) and no function but `__init__` assigns them; else []."""
    tested: list[str] = []
    for node in ast.walk(test):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.value.id != "self":
                return []
            tested.append(node.attr)
        elif isinstance(node, ast.Name):
            if node.id != "self":
                return []
        elif not isinstance(
            node,
            ast.Compare
            | ast.BoolOp
            | ast.UnaryOp
            | ast.Constant
            | ast.cmpop
            | ast.boolop
            | ast.unaryop
            | ast.expr_context,
        ):
            return []  # a call, a subscript, arithmetic: more than a setting
    if not tested or set(tested) & assigned:
        return []
    return list(dict.fromkeys(tested))


@functools.lru_cache(maxsize=8)
def assigned_after_init(tree: ast.Module) -> frozenset[str]:
    """Attributes any function but `__init__` assigns (on `self` or any other object).
    Kept per tree (nodes hash by identity): every missed branch of a file asks again."""
    assigned: set[str] = set()
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        if function.name == "__init__":
            continue
        for node in ast.walk(function):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = list(node.targets)
            elif isinstance(node, ast.AugAssign | ast.AnnAssign):
                targets = [node.target]
            for target in targets:
                for part in ast.walk(target):
                    if isinstance(part, ast.Attribute):
                        assigned.add(part.attr)
    return frozenset(assigned)
