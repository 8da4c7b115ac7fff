"""What each inferred state field's values mean, where the reference's own source says so:
the spec's `[state.describe]`, which the prompt shows beside each field.

Three places are read, in this order, and nothing is made up:
- a comment on, or in the comment lines just above, an assignment `self.<attr> = ...` in the
  class that holds the attribute (or one it inherits from): `self.tau = 0.02  # seconds
  between state updates`;
- for a field that is the observation in every state played, the class docstring's
  `Num | Observation` table (Gymnasium's classic-control docstrings), component by component;
- for such a field of a `Discrete(n)` observation, the range of its codes.
A field none of them speaks of gets no description, and `envport check` says so where the
state is bridged.
"""

from __future__ import annotations

import ast
import inspect
import io
import textwrap
import tokenize
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gymnasium import spaces

from envport.init.obsnames import Row, observation_table
from envport.init.state import Field
from envport.init.watch import objects

# A description longer than this is cut: it is one line of the prompt per field.
LONGEST = 300
# Comments that are tooling's or the author's notes, not what a value means.
_NOT_MEANING = ("noqa", "type:", "pragma", "pylint", "fmt:", "todo", "fixme", "xxx", "http")


@dataclass(frozen=True)
class Meaning:
    text: str
    source: str  # where it was read, for the spec's comment


def meanings(env: Any, fields: list[Field], obs_is: dict[str, bool]) -> dict[str, Meaning]:
    """Field name -> its meaning, for the fields the reference's source speaks of."""
    holders = dict(objects(env))
    found: dict[str, Meaning] = {}
    for field in fields:
        prefix, _, attr = field.path.rpartition(".")
        holder = holders.get(f"{prefix}." if prefix else "")
        meaning = None if holder is None else commented(type(holder), attr)
        if meaning is None and obs_is.get(field.name):
            meaning = _observed(env, field)
        if meaning is not None:
            found[field.name] = meaning
    return found


def commented(cls: type, attr: str) -> Meaning | None:
    """The comment on the first assignment of `self.<attr>` that has one, in `cls` or the
    classes it inherits from (nearest first)."""
    for klass in cls.__mro__:
        if klass is object:
            continue
        try:
            lines, first = inspect.getsourcelines(klass)
            file = Path(inspect.getsourcefile(klass) or "?").name
            source = textwrap.dedent("".join(lines))
            tree = ast.parse(source)
            notes = _comments(source)
        except (OSError, TypeError, SyntaxError, tokenize.TokenError):
            continue  # a class without readable source (a builtin, a C extension) says nothing
        for line, end in _assignments(tree, attr):
            said = notes.get(line) or notes.get(end) or _above(notes, source, line)
            if said:
                where = f"{klass.__name__} ({file}, line {first + line - 1})"
                return Meaning(_cut(said), f"the comment on `self.{attr} = ...` in {where}")
    return None


def _assignments(tree: ast.AST, attr: str) -> list[tuple[int, int]]:
    """(first line, last line) of each plain assignment to `self.<attr>`, in source order."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign | ast.AugAssign):
            targets = [node.target]
        else:
            continue
        for target in targets:
            if (
                isinstance(target, ast.Attribute)
                and target.attr == attr
                and isinstance(target.value, ast.Name)
                and target.value.id == "self"
            ):
                found.append((node.lineno, node.end_lineno or node.lineno))
    return sorted(found)


def _comments(source: str) -> dict[int, str]:
    """Line -> the comment ending it, for comments after code (trailing); comment-only lines
    are keyed by the negative line, so the two are told apart."""
    notes: dict[int, str] = {}
    lines = source.splitlines()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type != tokenize.COMMENT:
            continue
        row, col = token.start
        text = _meaning(token.string)
        if text is None:
            continue
        alone = not lines[row - 1][:col].strip()
        notes[-row if alone else row] = text
    return notes


def _above(notes: dict[int, str], source: str, line: int) -> str | None:
    """The comment lines right above `line` (no blank line between), joined."""
    lines, said = source.splitlines(), []
    row = line - 1
    while row >= 1 and lines[row - 1].strip().startswith("#"):
        if -row in notes:
            said.append(notes[-row])
        row -= 1
    return " ".join(reversed(said)) or None


def _meaning(comment: str) -> str | None:
    """A comment's words, or None for a tooling note or code commented out."""
    text = comment.lstrip("#").strip()
    if not text or text.lower().startswith(_NOT_MEANING):
        return None
    try:
        parsed = ast.parse(text)
    except SyntaxError:
        return text
    # Words that parse as Python are code commented out, unless a bare expression of names
    # ("radians", "m/s").
    plain = (ast.Module, ast.Expr, ast.Name, ast.BinOp, ast.operator, ast.expr_context)
    return text if all(isinstance(node, plain) for node in ast.walk(parsed)) else None


def _observed(env: Any, field: Field) -> Meaning | None:
    """A field that is the observation: its docstring table's rows, or a Discrete range."""
    cls = type(env.unwrapped)
    space = env.observation_space
    size = 1
    for extent in field.shape:
        size *= extent
    rows = observation_table(cls, size) if len(field.shape) == 1 else None
    if rows is not None:
        parts = [f"[{index}] {_row(row)}" for index, row in enumerate(rows)]
        return Meaning(
            _cut("the observation's components in order: " + "; ".join(parts)),
            f"the `Num | Observation` table in {cls.__name__}'s docstring (the field equals "
            "the observation in every state played)",
        )
    if isinstance(space, spaces.Discrete) and not field.shape:
        low, count = int(space.start), int(space.n)
        return Meaning(
            f"an integer code in {low}..{low + count - 1}: the observation itself",
            f"the observation space, Discrete({count}) (the field equals the observation in "
            "every state played)",
        )
    return None


def _row(row: Row) -> str:
    """`Cart Position (Min -4.8, Max 4.8)`: the Observation cell, then the other columns."""
    name = next(text for header, text in row if header.lower() == "observation")
    rest = [
        f"{header} {text}"
        for header, text in row
        if header.lower() not in ("num", "observation") and text
    ]
    named = name.replace("`", "")
    return f"{named} ({', '.join(rest)})".replace("`", "") if rest else named


def _cut(text: str) -> str:
    return text if len(text) <= LONGEST else text[: LONGEST - 3].rstrip() + "..."
