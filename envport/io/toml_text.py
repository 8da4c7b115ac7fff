"""TOML values and comment blocks for the spec `envport init` writes."""

from __future__ import annotations

import json
import math
import textwrap
from typing import Any


def value(v: Any) -> str:
    """A Python value (what a PortSpec or a state holds) as an inline TOML value; a table's
    None entries are left out, as TOML has no null."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        # A JSON string is a valid TOML basic string for everything json.dumps emits.
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list | tuple):
        return "[" + ", ".join(value(x) for x in v) + "]"
    if isinstance(v, dict):
        items = [f"{key(k)} = {value(x)}" for k, x in v.items() if x is not None]
        return "{ " + ", ".join(items) + " }" if items else "{}"
    raise TypeError(f"no TOML form for {type(v).__name__}")


def key(k: str) -> str:
    bare = k.replace("_", "").replace("-", "").isalnum() and k.isascii()
    return k if bare else json.dumps(k)


def comment(text: str) -> str:
    """A paragraph as `# ` lines of at most 92 characters."""
    return "\n".join("# " + line for line in textwrap.wrap(text, 90)) + "\n"
