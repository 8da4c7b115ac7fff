"""Writing a planned spec back to TOML, so the verifier reads the modules the plan chose.

Only needed when the spec gave no modules for the target: the run's frozen envport.toml is
then rewritten with the validated plan. The writer covers what a PortSpec holds (strings,
numbers, booleans, lists, tables) as inline tables, which tomllib reads back unchanged.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from envport.spec import ModuleSpec, PortSpec, TargetSpec


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        # A JSON string is a valid TOML basic string for everything json.dumps emits.
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_value(item) for item in value) + "]"
    if isinstance(value, dict):
        items = ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items() if v is not None)
        return "{" + items + "}"
    raise TypeError(f"cannot write {type(value).__name__} to TOML")


def _key(key: str) -> str:
    bare = key.replace("_", "").replace("-", "").isalnum() and key.isascii()
    return key if bare else json.dumps(key)


def dumps(data: dict[str, Any], header: str = "") -> str:
    lines = [f"# {line}" for line in header.splitlines()]
    lines += [f"{_key(k)} = {_value(v)}" for k, v in data.items() if v is not None]
    return "\n".join(lines) + "\n"


def write_planned_spec(
    path: Path, spec: PortSpec, target: str, entry: str, modules: list[ModuleSpec]
) -> None:
    targets = dict(spec.targets)
    targets[target] = TargetSpec(entry=entry, modules=modules)
    planned = spec.model_copy(update={"targets": targets})
    header = (
        f"Frozen spec of this run, with the module plan for target `{target}` that the model "
        "proposed\nand envport validated (the original spec gave none)."
    )
    path.write_text(
        dumps(planned.model_dump(mode="json", exclude_none=True), header), encoding="utf-8"
    )
