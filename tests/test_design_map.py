"""The documentation names only code that exists, and the verifier's map names all of it.

docs/design.md maps the verifier module by module ("The verifier's map"); a module moved or
renamed without the page following would leave a reader at a dead end. So every
`envport/...py` path, `envport/...` folder and dotted `envport.x.y` name the pages give must
exist (a dotted name may end in a module's top-level name: `envport.verifiers.verify.verify`),
and every module of envport/verifiers must be named on the design page by its full path.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DESIGN = REPO / "docs" / "design.md"
PAGES = [*sorted((REPO / "docs").glob("*.md")), REPO / "README.md"]
# Repository paths only: not a cache directory such as ~/.cache/envport/explored/.
PATH = re.compile(r"(?<![\w/.~-])envport/[\w/]*[\w]+(?:\.py|/)")
DOTTED = re.compile(r"\benvport(?:\.[A-Za-z_]\w*)+")
# Dotted words that are not modules: the spec's file name.
NOT_MODULES = {"envport.toml"}


def named_paths(text: str) -> set[str]:
    return {m.group(0) for m in PATH.finditer(text)}


def named_modules(text: str) -> set[str]:
    return {m.group(0) for m in DOTTED.finditer(text)} - NOT_MODULES


def top_level_names(module: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.parse(module.read_text()).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def resolves(dotted: str) -> bool:
    """A package, a module, or a module's top-level name."""
    parts = dotted.split(".")
    base = REPO.joinpath(*parts)
    if (base / "__init__.py").exists() or base.with_suffix(".py").exists():
        return True
    module = REPO.joinpath(*parts[:-1])
    for file in (module.with_suffix(".py"), module / "__init__.py"):
        if file.exists():
            return parts[-1] in top_level_names(file)
    return False


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_path_a_page_names_exists(page: Path) -> None:
    missing = sorted(p for p in named_paths(page.read_text()) if not (REPO / p).exists())
    assert not missing, f"{page.name} names paths that do not exist: {missing}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_dotted_module_a_page_names_exists(page: Path) -> None:
    missing = sorted(m for m in named_modules(page.read_text()) if not resolves(m))
    assert not missing, f"{page.name} names modules that do not exist: {missing}"


def test_the_verifiers_map_names_every_verifier_module() -> None:
    named = named_paths(DESIGN.read_text())
    modules = {
        str(p.relative_to(REPO))
        for p in (REPO / "envport" / "verifiers").rglob("*.py")
        if p.name != "__init__.py"
    }
    assert len(modules) > 50  # the glob found the package
    unnamed = sorted(modules - named)
    assert not unnamed, f"docs/design.md's verifier map misses {unnamed}"


def test_the_checks_notice_a_stale_name() -> None:
    # The parsing itself: a moved module's old path and dotted name are caught, a current
    # one and a module attribute pass.
    text = "see `envport/verifiers/l3.py` and envport.verifiers.l3_lanes.Chunks"
    assert named_paths(text) == {"envport/verifiers/l3.py"}
    assert not (REPO / "envport/verifiers/l3.py").exists()
    assert not resolves("envport.verifiers.l3_lanes.Chunks")
    assert resolves("envport.verifiers.levels.l3.chunks.Chunks")
    assert resolves("envport.verifiers.levels")
    assert not resolves("envport.verifiers.levels.l3.chunks.NoSuchName")
