"""The import direction between verifiers, targets and serve (docs/design.md, Layers).

verifiers > targets > serve: serve is the process plumbing and knows nothing of ports or
levels; the worker's answers (`envport.verifiers.host`) are the program it runs. Read from
the source's import statements, lazy ones inside functions included.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "envport"
# Each package and those it must never import.
FORBIDDEN = {
    "serve": ("envport.targets", "envport.verifiers"),
    "targets": ("envport.verifiers",),
}


def imported(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_a_lower_layer_never_imports_a_higher_one(package: str) -> None:
    found = [
        f"{path.relative_to(PACKAGE.parent)} imports {name}"
        for path in sorted((PACKAGE / package).glob("*.py"))
        for name in sorted(imported(path))
        if name.startswith(FORBIDDEN[package])
    ]
    assert found == []


def test_l1_and_its_landings_check_do_not_import_each_other() -> None:
    assert not any("l1_landings" in name for name in imported(PACKAGE / "verifiers" / "l1.py"))


def test_the_check_reads_imports_inside_functions_too(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from envport.verifiers import l3\n", encoding="utf-8")
    assert "envport.verifiers.l3" in imported(module)
