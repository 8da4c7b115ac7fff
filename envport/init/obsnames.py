"""Observation names from the env class's docstring: a Markdown table whose header has a
`Num` column and an `Observation` column (Gymnasium's classic-control docstrings), one row
per component 0..n-1. Else `obs[i]`."""

from __future__ import annotations

import re
from typing import Any


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _snake(text: str) -> str:
    words = re.findall(r"[A-Za-z0-9]+", text.lower())
    return "_".join(words) or "obs"


# One row of a docstring's observation table: (column header, cell) in the table's order.
Row = list[tuple[str, str]]


def observation_table(cls: type, size: int) -> list[Row] | None:
    """The rows of the class docstring's `Num | Observation` table, component 0..size-1 in
    order, if it has one with exactly `size` rows."""
    lines = (cls.__doc__ or "").splitlines()
    for i, line in enumerate(lines):
        headers = _cells(line) if line.strip().startswith("|") else []
        lowered = [h.lower() for h in headers]
        if "num" not in lowered or "observation" not in lowered:
            continue
        num, needed = lowered.index("num"), max(lowered.index("num"), lowered.index("observation"))
        rows: dict[int, Row] = {}
        for text in lines[i + 2 :]:
            if not text.strip().startswith("|"):
                break
            cells = _cells(text)
            if len(cells) > needed and cells[num].isdigit():
                rows[int(cells[num])] = list(zip(headers, cells, strict=False))
        if sorted(rows) == list(range(size)):
            return [rows[k] for k in range(size)]
    return None


def cell(row: Row, column: str) -> str:
    return next(text for header, text in row if header.lower() == column)


def docstring_names(cls: type, size: int) -> list[str] | None:
    """The table's names, if the class docstring has one with exactly `size` rows."""
    rows = observation_table(cls, size)
    if rows is None:
        return None
    names = [_snake(cell(row, "observation").replace("`", "")) for row in rows]
    return names if len(set(names)) == size else None


def observation_names(env: Any, obs_shape: tuple[int, ...]) -> tuple[list[str], str]:
    """(names, how they were found) for a flat observation; scalar observations get none."""
    if len(obs_shape) != 1:
        return [], "the observation is not a flat vector: no names"
    size = obs_shape[0]
    found = docstring_names(type(env.unwrapped), size)
    if found is not None:
        return (
            found,
            f"from the `Num | Observation` table in {type(env.unwrapped).__name__}'s docstring",
        )
    return [f"obs[{i}]" for i in range(size)], "no observation table in the docstring: obs[i]"
