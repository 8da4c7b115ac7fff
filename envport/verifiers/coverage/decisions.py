"""The decisions of the reference's source with more than one condition, read from its
syntax tree: what condition coverage (conditions.py) evaluates and counts.

Two kinds. A **boolean** decision is an `if`, `elif` or `while` whose test joins conditions
with `and`/`or` (`if new_x < 0 or new_x > 9:`): each condition should be seen deciding the
outcome alone, true once and false once (masking MC/DC). A **chain** is an `if` with
`elif`s (`if self.ball_x == self.pos: ... elif new_x == self.pos: ...`): its tests are
evaluated on the same values (nothing runs between them), and where two can hold at once
their order decides which body runs, so each such pair should be seen true together. Two
tests of one expression against constants that cannot both hold (`ball_dir == 0`,
`ball_dir == 1`; `new_y < 0`, `new_y == 9`) are no pair.

A condition is evaluated by the measure on the reference's own frame, so only one that
cannot change anything is: names, attributes, subscripts, constants, arithmetic and
comparisons, and calls of `len`, `abs`, `min`, `max`, `int`, `float`, `bool`. A decision
with any other call in a condition (a random draw, a method) is left out.
"""

from __future__ import annotations

import ast
import dataclasses
import itertools
from dataclasses import dataclass
from types import CodeType
from typing import Any

from envport.verifiers.coverage.settling import assigned_after_init, settings_only

SAFE_CALLS = frozenset({"len", "abs", "min", "max", "int", "float", "bool"})
_SAFE_NODES = (
    ast.Name,
    ast.Attribute,
    ast.Subscript,
    ast.Constant,
    ast.Compare,
    ast.BinOp,
    ast.UnaryOp,
    ast.Tuple,
    ast.Slice,
    ast.Load,
    ast.operator,
    ast.unaryop,
    ast.cmpop,
    ast.Call,
)
# A decision with more conditions is left out: its combinations are too many to read.
MOST_CONDITIONS = 6


@dataclass(frozen=True)
class Decision:
    file: str
    line: int  # where the measure evaluates it: the `if`, `elif` or `while` line
    kind: str  # "boolean" | "chain"
    source: str  # the test (a chain: its tests joined by " / ")
    conditions: tuple[str, ...]
    codes: tuple[CodeType, ...]
    # A boolean decision's shape: ("and" | "or", children), a child an int (a condition's
    # index) or another shape.
    shape: tuple | None = None
    # A chain's pairs of tests (indices) that may hold together.
    pairs: tuple[tuple[int, int], ...] = ()
    # Conditions on settings alone (attributes only `__init__` assigns, settling.py): fixed
    # for the run, so never counted as conditions or in pairs.
    settings: tuple[int, ...] = ()

    @property
    def key(self) -> str:
        return f"{self.file}:{self.line}:{self.kind}"


def decisions(file: str, source: str) -> list[Decision]:
    """Every boolean decision and chain in `source` whose conditions can all be evaluated."""
    tree = ast.parse(source)
    assigned = assigned_after_init(tree)
    found: list[Decision] = []
    members: set[int] = set()  # `elif` If nodes: in their chain, never a chain's head
    for node in ast.walk(tree):
        if isinstance(node, ast.If | ast.While) and isinstance(node.test, ast.BoolOp):
            decision = _boolean(file, node)
            if decision is not None:
                found.append(_with_settings(decision, node, assigned))
        if isinstance(node, ast.If) and id(node) not in members:
            tests = [node.test]
            link = node
            while len(link.orelse) == 1 and isinstance(link.orelse[0], ast.If):
                link = link.orelse[0]
                members.add(id(link))
                tests.append(link.test)
            decision = _chain(file, node.lineno, tests) if len(tests) > 1 else None
            if decision is not None:
                found.append(_with_settings(decision, node, assigned))
    return sorted(found, key=lambda d: (d.line, d.kind))


def _boolean(file: str, node: ast.If | ast.While) -> Decision | None:
    leaves: list[ast.expr] = []

    def shape(expr: ast.expr) -> Any:
        if isinstance(expr, ast.BoolOp):
            word = "and" if isinstance(expr.op, ast.And) else "or"
            return (word, tuple(shape(value) for value in expr.values))
        leaves.append(expr)
        return len(leaves) - 1

    tree = shape(node.test)
    if len(leaves) > MOST_CONDITIONS or not all(_safe(leaf) for leaf in leaves):
        return None
    return Decision(
        file=file,
        line=node.lineno,
        kind="boolean",
        source=ast.unparse(node.test),
        conditions=tuple(ast.unparse(leaf) for leaf in leaves),
        codes=tuple(_compiled(leaf, file) for leaf in leaves),
        shape=tree,
    )


def _chain(file: str, line: int, tests: list[ast.expr]) -> Decision | None:
    if len(tests) > MOST_CONDITIONS or not all(_safe(test) for test in tests):
        return None
    pairs = tuple(
        (i, j)
        for i, j in itertools.combinations(range(len(tests)), 2)
        if not _exclusive(tests[i], tests[j])
    )
    if not pairs:
        return None
    return Decision(
        file=file,
        line=line,
        kind="chain",
        source=" / ".join(ast.unparse(test) for test in tests),
        conditions=tuple(ast.unparse(test) for test in tests),
        codes=tuple(_compiled(test, file) for test in tests),
        pairs=pairs,
    )


def _with_settings(
    decision: Decision, node: ast.If | ast.While, assigned: frozenset[str]
) -> Decision:
    """The decision with its conditions on settings marked (Asterix's `self.ramping`)."""
    leaves = [ast.parse(text, mode="eval").body for text in decision.conditions]
    settings = tuple(i for i, leaf in enumerate(leaves) if settings_only(leaf, assigned))
    return dataclasses.replace(decision, settings=settings) if settings else decision


def _safe(expr: ast.expr) -> bool:
    for node in ast.walk(expr):
        if not isinstance(node, _SAFE_NODES) and not isinstance(node, ast.expr_context):
            return False
        if isinstance(node, ast.Call) and not (
            isinstance(node.func, ast.Name) and node.func.id in SAFE_CALLS and not node.keywords
        ):
            return False
    return True


def _compiled(expr: ast.expr, file: str) -> CodeType:
    return compile(ast.Expression(body=expr), file, "eval")


def _interval(test: ast.expr) -> tuple[str, float, float, bool, bool] | None:
    """`x OP constant` as (x's source, low, high, low included, high included)."""
    if not (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.comparators[0], ast.Constant)
        and isinstance(test.comparators[0].value, int | float)
        and not isinstance(test.comparators[0].value, bool)
    ):
        return None
    subject, value, op = ast.unparse(test.left), float(test.comparators[0].value), test.ops[0]
    inf = float("inf")
    if isinstance(op, ast.Eq):
        return subject, value, value, True, True
    if isinstance(op, ast.Lt):
        return subject, -inf, value, False, False
    if isinstance(op, ast.LtE):
        return subject, -inf, value, False, True
    if isinstance(op, ast.Gt):
        return subject, value, inf, False, False
    if isinstance(op, ast.GtE):
        return subject, value, inf, True, False
    return None


def _exclusive(a: ast.expr, b: ast.expr) -> bool:
    """Whether two tests of one expression against constants cannot hold together."""
    equal_a, equal_b = _equals(a), _equals(b)
    if equal_a is not None and equal_b is not None and equal_a[0] == equal_b[0]:
        return equal_a[1] != equal_b[1]  # `a == 'l'`, `a == 'r'`
    first, second = _interval(a), _interval(b)
    if first is None or second is None or first[0] != second[0]:
        return False
    (_, low_a, high_a, in_low_a, in_high_a), (_, low_b, high_b, in_low_b, in_high_b) = (
        first,
        second,
    )
    if high_a < low_b or high_b < low_a:
        return True
    if high_a == low_b:
        return not (in_high_a and in_low_b)
    if high_b == low_a:
        return not (in_high_b and in_low_a)
    return False


def _equals(test: ast.expr) -> tuple[str, Any] | None:
    """`x == constant` as (x's source, the constant)."""
    if (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Eq)
        and isinstance(test.comparators[0], ast.Constant)
    ):
        return ast.unparse(test.left), test.comparators[0].value
    return None
