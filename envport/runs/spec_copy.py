"""Writing a planned spec back to TOML, so the verifier reads the modules the plan chose.

Only needed when the spec gave no modules for the target: the run's frozen envport.toml is
then rewritten with the validated plan. The writer covers what a PortSpec holds (strings,
numbers, booleans, lists, tables) as inline tables, which tomllib reads back unchanged.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from envport.io.toml_text import key, value
from envport.spec import ModuleSpec, PortSpec, TargetSpec


def dumps(data: dict[str, Any], header: str = "") -> str:
    lines = [f"# {line}" for line in header.splitlines()]
    lines += [f"{key(k)} = {value(v)}" for k, v in data.items() if v is not None]
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
