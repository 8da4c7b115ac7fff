"""The project's documents stand on their own: what code and docs cite is in the repository."""

from __future__ import annotations

import re
import shlex
import subprocess

from envport.cli import build_parser

from helpers import ROOT, user_env

DESIGN = ROOT / "docs" / "design.md"


def tracked_text_files() -> dict[str, str]:
    names = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True, env=user_env()
    ).stdout.split()
    files = {}
    for name in names:
        path = ROOT / name
        if path.suffix in {".py", ".md", ".toml", ".j2", ".txt", ""} and path.is_file():
            files[name] = path.read_text(encoding="utf-8", errors="replace")
    return files


# Spelled in pieces, so this file does not itself name what no file may cite.
_OUTSIDE = ("DESIGN" + ".md", ".." + "/shared")


def test_nothing_cites_a_document_outside_the_repository() -> None:
    files = tracked_text_files()
    assert files
    for name, text in files.items():
        for outside in _OUTSIDE:
            assert outside not in text, f"{name} cites {outside}, which is not in the project"


def test_every_design_citation_names_a_contract_the_design_has() -> None:
    contracts = set(re.findall(r"^(\d+)\. \*\*", DESIGN.read_text(encoding="utf-8"), re.M))
    assert contracts == {str(n) for n in range(1, 9)}
    cited = {
        (name, number)
        for name, text in tracked_text_files().items()
        for number in re.findall(r"docs/design\.md,\s+contract\s+(\d+)", text)
    }
    assert len(cited) >= 10
    for name, number in cited:
        assert number in contracts, f"{name} cites contract {number}"


def _section(title: str, page: str = "docs/getting-started.md") -> str:
    text = (ROOT / page).read_text(encoding="utf-8")
    start = text.index(f"### {title}\n")
    end = text.find("\n#", start + 1)
    return text[start:] if end < 0 else text[start:end]


def _commands(section: str) -> list[list[str]]:
    """The `envport ...` command lines of a documentation section (indented blocks and
    inline)."""
    joined = section.replace("\\\n", " ")
    found = re.findall(r"^ {4}(envport [^\n]+)$", joined, re.M)
    found += re.findall(r"`(envport [^`]+)`", joined)
    return [shlex.split(command) for command in found]


def test_the_real_model_quickstart_and_what_to_do_when_a_run_gives_up() -> None:
    """The documentation says how to run a live model and what it costs, and how to go on
    after a run gave up; every command it shows is one envport accepts."""
    live = _section("With a real model")
    assert "--model anthropic:" in live and "--base-url http://localhost" in live
    assert re.search(r"[\d,]+ input and [\d,]+ output tokens", " ".join(live.split()))
    gave_up = _section("When a run gives up")
    commands = _commands(live) + _commands(gave_up)
    assert len(commands) >= 4, commands
    parser = build_parser()
    for words in commands:
        args = [w.replace("RUN@K", "RUN@3") for w in words[1:]]
        parser.parse_args(args)  # argparse exits on anything it does not accept
    said = " ".join(gave_up.split())
    assert "envport resume RUN --max-iterations" in said
    assert "envport verify RUN --port RUN/port" in said


def test_the_readme_opens_with_the_two_commands_and_links_only_pages_that_exist() -> None:
    """A newcomer reads the two commands first, and every page the README sends them to is
    in the repository (the site's own links are checked by `mkdocs build --strict`)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first_commands = re.findall(r"^ {4}(\S.*)$", readme, re.M)[:2]
    assert first_commands == ["./dev quickstart", "./dev test"]
    assert len(readme.splitlines()) < 200, "the README is an introduction; reference goes in docs/"
    linked = re.findall(r"\]\((docs/[^)#]+)", readme)
    assert len(linked) >= 10
    for target in linked:
        assert (ROOT / target).is_file(), f"README links {target}, which does not exist"
    site = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for page in sorted((ROOT / "docs").glob("*.md")):
        assert page.name in site, f"docs/{page.name} is not in mkdocs.yml's navigation"


def test_the_readme_and_help_say_what_references_envport_takes() -> None:
    """A Gymnasium env or a PettingZoo two-player game (contract 8), in both first words."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    opening = readme.split("\n\n")[1]
    described = " ".join(build_parser().format_help().split())
    for text in (" ".join(opening.split()), described):
        assert "Gymnasium" in text and "PettingZoo" in text, text
