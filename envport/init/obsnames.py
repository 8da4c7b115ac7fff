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


def docstring_names(cls: type, size: int) -> list[str] | None:
    """The table's names, if the class docstring has one with exactly `size` rows."""
    lines = (cls.__doc__ or "").splitlines()
    for i, line in enumerate(lines):
        header = [c.lower() for c in _cells(line)] if line.strip().startswith("|") else []
        if "num" not in header or "observation" not in header:
            continue
        num, col = header.index("num"), header.index("observation")
        names: dict[int, str] = {}
        for row in lines[i + 2 :]:
            if not row.strip().startswith("|"):
                break
            cells = _cells(row)
            if len(cells) > max(num, col) and cells[num].isdigit():
                names[int(cells[num])] = _snake(cells[col].replace("`", ""))
        if sorted(names) == list(range(size)) and len(set(names.values())) == size:
            return [names[k] for k in range(size)]
    return None


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
