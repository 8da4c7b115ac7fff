"""The project's documents stand on their own: what code and docs cite is in the repository."""

from __future__ import annotations

import re
import subprocess

from helpers import ROOT

DESIGN = ROOT / "docs" / "design.md"


def tracked_text_files() -> dict[str, str]:
    names = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    files = {}
    for name in names:
        path = ROOT / name
        if path.suffix in {".py", ".md", ".toml", ".j2", ".txt", ""} and path.is_file():
            files[name] = path.read_text(encoding="utf-8", errors="replace")
    return files


def test_nothing_cites_a_document_outside_the_repository() -> None:
    files = tracked_text_files()
    assert files
    for name, text in files.items():
        if name == "tests/test_docs.py":  # this test names what it looks for
            continue
        assert "DESIGN.md" not in text, f"{name} cites DESIGN.md, which is not in the project"
        assert "../shared" not in text, f"{name} refers to a file outside the repository"


def test_every_design_citation_names_a_contract_the_design_has() -> None:
    contracts = set(re.findall(r"^(\d+)\. \*\*", DESIGN.read_text(encoding="utf-8"), re.M))
    assert contracts == {str(n) for n in range(1, 8)}
    cited = {
        (name, number)
        for name, text in tracked_text_files().items()
        for number in re.findall(r"docs/design\.md,\s+contract\s+(\d+)", text)
    }
    assert len(cited) >= 10
    for name, number in cited:
        assert number in contracts, f"{name} cites contract {number}"
