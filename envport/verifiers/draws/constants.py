"""The numbers the reference's own code compares against or clips to: where edge draws land.

A port whose threshold is rounded in its fifth digit, or whose `<=` at a wall became `<`,
differs from the reference only for states at or right next to such a number, which
uniform draws from the spec's bounds practically never produce. So the numbers are read
from the reference's source: the operands of `<`, `<=`, `>`, `>=`, `==`, `!=` and the
arguments of clip-like calls (`np.clip`, `min`, `max`, ...), in the env class (rendering
aside) and its module's functions, resolved on the live env: `self.x_threshold` is read
from the instance, `pi` or `MAX_SPEED` from the module, `-self.max_speed` is negated.
"""

from __future__ import annotations

import ast
import inspect
import math
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from envport.spec import PortSpec

# Calls whose arguments are limits: NumPy's and Python's clips, and the helpers classic
# control envs write for the same job (Acrobot's `bound` and `wrap`).
CLIP_CALLS = frozenset({"clip", "min", "max", "minimum", "maximum", "clamp", "bound", "wrap"})
COMPARISONS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)
# Drawing code, not dynamics: its pixel sizes and colours are no thresholds.
SKIPPED_METHODS = frozenset({"render", "close"})
# A threshold this close outside a state bound is one the bounds were meant to include.
NEAR_BOUND = 1e-3
# Arrays (an env's per-component limits) up to this size contribute their elements.
MAX_ARRAY = 16

_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
}


@dataclass(frozen=True)
class SourceConstants:
    compared: tuple[float, ...] = ()  # operands of comparisons: thresholds
    clipped: tuple[float, ...] = ()  # limits of clip-like calls

    @property
    def all(self) -> tuple[float, ...]:
        return tuple(sorted(set(self.compared) | set(self.clipped)))


def _numbers(value: Any) -> list[float]:
    if isinstance(value, bool | np.bool_) or value is None:
        return []
    if isinstance(value, int | float | np.integer | np.floating):
        number = float(value)
        return [number] if math.isfinite(number) else []
    if isinstance(value, np.ndarray) and value.dtype.kind in "iuf" and value.size <= MAX_ARRAY:
        return [float(v) for v in value.flat if math.isfinite(float(v))]
    return []


class _Resolver:
    """Evaluates the constant part of an expression on the live env, or gives up (None)."""

    def __init__(self, env: Any, namespace: dict[str, Any]) -> None:
        self.env = env
        self.namespace = namespace

    def value(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            inner = self.value(node.operand)
            if not _numbers(inner):
                return None
            return -inner if isinstance(node.op, ast.USub) else inner
        if isinstance(node, ast.Name):
            return self.namespace.get(node.id)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.value.id == "self":
                holder: Any = self.env
            else:
                holder = self.namespace.get(node.value.id)
            try:
                return getattr(holder, node.attr, None) if holder is not None else None
            except Exception:  # a property that cannot be read here is no constant
                return None
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            left, right = self.value(node.left), self.value(node.right)
            if _numbers(left) and _numbers(right) and not isinstance(left, np.ndarray):
                try:
                    return _BINARY[type(node.op)](left, right)
                except (ArithmeticError, ValueError):
                    return None
        return None


def _call_name(node: ast.Call) -> str | None:
    if isinstance(node.func, ast.Name):
        return node.func.id
    if isinstance(node.func, ast.Attribute):
        return node.func.attr
    return None


def _scanned(tree: ast.Module, class_name: str) -> list[ast.AST]:
    """The env class's methods (rendering aside) and the module's functions."""
    nodes: list[ast.AST] = []
    for top in tree.body:
        if isinstance(top, ast.FunctionDef):
            nodes.append(top)
        elif isinstance(top, ast.ClassDef) and top.name == class_name:
            nodes += [
                item
                for item in top.body
                if not (isinstance(item, ast.FunctionDef) and item.name in SKIPPED_METHODS)
            ]
    return nodes


def source_constants(env: Any) -> SourceConstants:
    """The constants of the reference env's source; empty if its source cannot be read."""
    base = getattr(env, "unwrapped", env)
    cls = type(base)
    module = inspect.getmodule(cls)
    try:
        tree = ast.parse(inspect.getsource(module)) if module is not None else None
    except (OSError, TypeError, SyntaxError):
        tree = None
    if tree is None:
        return SourceConstants()
    resolver = _Resolver(base, vars(module))
    compared: set[float] = set()
    clipped: set[float] = set()
    for scanned in _scanned(tree, cls.__name__):
        for node in ast.walk(scanned):
            if isinstance(node, ast.Compare) and all(isinstance(o, COMPARISONS) for o in node.ops):
                for operand in (node.left, *node.comparators):
                    compared.update(_numbers(resolver.value(operand)))
            elif isinstance(node, ast.Call) and _call_name(node) in CLIP_CALLS:
                for argument in (*node.args, *(k.value for k in node.keywords)):
                    clipped.update(_numbers(resolver.value(argument)))
    return SourceConstants(tuple(sorted(compared)), tuple(sorted(clipped)))


def threshold_warnings(spec: PortSpec, constants: SourceConstants) -> list[str]:
    """One line per state bound that stops just short of a threshold the reference compares
    against: states between the bound and the threshold are never drawn, and a port whose
    threshold is off by less than that gap passes."""
    lines = []
    for name, bound in spec.state.bounds.items():
        if bound.integer:
            continue
        low, high = np.broadcast_arrays(np.asarray(bound.low, float), np.asarray(bound.high, float))
        for index in np.ndindex(low.shape):
            component = name + (f"[{', '.join(map(str, index))}]" if index else "")
            for side, edge in (("low", float(low[index])), ("high", float(high[index]))):
                for threshold in constants.compared:
                    outside = threshold < edge if side == "low" else threshold > edge
                    if outside and abs(threshold - edge) <= NEAR_BOUND:
                        lines.append(
                            f"state.bounds.{component}: {side} = {edge:g} stops "
                            f"{abs(threshold - edge):.3g} short of the threshold "
                            f"{threshold:.10g} the reference compares against; widen it to "
                            "include the threshold"
                        )
    return lines
