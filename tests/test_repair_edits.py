"""Extracting whole-file edits from model answers, and applying them.

The answer texts below are scripted test inputs (hand-written), not model output.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from envport.repair.apply import apply_edits, read_files
from envport.repair.edits import (
    PATH_TOKEN,
    EditParseError,
    extract_block,
    parse_answer,
    port_path,
)

FENCE = "```"


def answer(*parts: str) -> str:
    return "\n".join(parts) + "\n"


def test_the_documented_shape_with_prose_around(tmp_path: Path) -> None:
    text = answer(
        "The bug is the comparison.",
        "",
        "### File: env.py",
        f"{FENCE}python",
        "def step():",
        "    return 1",
        FENCE,
        "",
        "That should do it.",
    )
    parsed = parse_answer(text, tmp_path, required=["env.py"])
    assert parsed.files == {"env.py": "def step():\n    return 1\n"}
    assert "The bug is the comparison." in parsed.prose
    assert "That should do it." in parsed.prose
    assert "return 1" not in parsed.prose


@pytest.mark.parametrize(
    "header",
    [
        "### File: env.py",
        "**env.py**",
        "`env.py`:",
        "File: `env.py`",
        "## env.py (updated)",
        "Here is the fixed `env.py`:",
    ],
)
def test_header_variants(tmp_path: Path, header: str) -> None:
    text = answer(header, FENCE, "x = 1", FENCE)
    assert parse_answer(text, tmp_path).files == {"env.py": "x = 1\n"}


@pytest.mark.parametrize(
    "opener", ["```python env.py", '```python title="env.py"', "```env.py", "```python:env.py"]
)
def test_path_in_the_info_string(tmp_path: Path, opener: str) -> None:
    assert parse_answer(answer(opener, "x = 1", FENCE), tmp_path).files == {"env.py": "x = 1\n"}


def test_prose_naming_two_files_is_not_a_header(tmp_path: Path) -> None:
    text = answer("The bug is in `env.py` and `physics.py`:", FENCE, "x = 1", FENCE)
    with pytest.raises(EditParseError, match="no fenced code block"):
        parse_answer(text, tmp_path)


def test_path_on_the_first_line_inside_the_block(tmp_path: Path) -> None:
    text = answer(f"{FENCE}python", "# file: physics.py", "g = 9.8", FENCE)
    assert parse_answer(text, tmp_path).files == {"physics.py": "# file: physics.py\ng = 9.8\n"}


def test_nested_fence_with_a_language_tag(tmp_path: Path) -> None:
    body = ['"""Usage:', "", f"{FENCE}python", "reset(key)", FENCE, '"""', "X = 1"]
    text = answer("### File: env.py", f"{FENCE}python", *body, FENCE, "", "Done.")
    assert parse_answer(text, tmp_path).files["env.py"] == "\n".join(body) + "\n"


def test_nested_bare_fence_is_resolved_by_parsing_the_python(tmp_path: Path) -> None:
    # The first bare fence would cut the docstring open; only the later one leaves valid code.
    body = ['"""Example:', FENCE, "x", FENCE, '"""', "Y = 2"]
    text = answer("### File: env.py", f"{FENCE}python", *body, FENCE)
    assert parse_answer(text, tmp_path).files["env.py"] == "\n".join(body) + "\n"


def test_four_backtick_fence_holds_three_backtick_lines(tmp_path: Path) -> None:
    body = ['"""', FENCE, "not the end", FENCE, '"""']
    text = answer("### File: env.py", "````python", *body, "````")
    assert parse_answer(text, tmp_path).files["env.py"] == "\n".join(body) + "\n"


def test_several_files_and_a_proposed_test(tmp_path: Path) -> None:
    text = answer(
        "### File: physics.py",
        FENCE,
        "A = 1",
        FENCE,
        "Run it with:",
        f"{FENCE}bash",
        "pytest",
        FENCE,
        "### File: tests/test_env.py",
        f"{FENCE}python",
        "def test_a():",
        "    assert True",
        FENCE,
    )
    parsed = parse_answer(text, tmp_path)
    assert parsed.files == {"physics.py": "A = 1\n"}
    assert parsed.tests == {"tests/test_env.py": "def test_a():\n    assert True\n"}


def test_untitled_block_is_the_file_when_one_file_is_asked_for(tmp_path: Path) -> None:
    text = answer("Here it is:", f"{FENCE}python", "def dynamics():", "    pass", FENCE)
    parsed = parse_answer(text, tmp_path, required=["physics.py"])
    assert parsed.files == {"physics.py": "def dynamics():\n    pass\n"}


def test_port_prefix_is_dropped(tmp_path: Path) -> None:
    text = answer("### File: port/env.py", FENCE, "x = 1", FENCE)
    assert list(parse_answer(text, tmp_path).files) == ["env.py"]


@pytest.mark.parametrize(
    ("path", "complaint"),
    [
        ("../evil.py", "outside the port"),
        ("sub/../../evil.py", "outside the port"),
        ("/etc/evil.py", "absolute path"),
        ("C:/evil.py", "absolute path"),
        ("notes.txt", "not a port file"),
        ("envport.toml", "not yours to edit"),
    ],
)
def test_paths_outside_the_port_are_refused(tmp_path: Path, path: str, complaint: str) -> None:
    with pytest.raises(EditParseError, match=complaint):
        parse_answer(answer(f"### File: {path}", FENCE, "x = 1", FENCE), tmp_path)


def test_symlink_out_of_the_port_is_refused(tmp_path: Path) -> None:
    port = tmp_path / "port"
    port.mkdir()
    (port / "link").symlink_to(tmp_path)
    with pytest.raises(EditParseError, match="leads outside"):
        parse_answer(answer("### File: link/evil.py", FENCE, "x = 1", FENCE), port)


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ("", "empty"),
        ("I would change the comparison to >=.", "no fenced code block"),
        (answer("### File: env.py", FENCE, "x = 1"), "not closed"),
        (answer("### File: env.py", FENCE, "x = 1", "# ... rest unchanged ...", FENCE), "leaves"),
        (answer("### File: other.py", FENCE, "x = 1", FENCE), "no whole-file block for `env.py`"),
    ],
)
def test_unusable_answers_say_why(tmp_path: Path, text: str, complaint: str) -> None:
    with pytest.raises(EditParseError, match=complaint):
        parse_answer(text, tmp_path, required=["env.py"])


def test_extract_block_for_plans() -> None:
    text = answer("Plan:", f"{FENCE}toml", 'entry = "env"', FENCE)
    assert extract_block(text, ("toml",)) == 'entry = "env"'
    assert extract_block(text, ("json",)) is None


def test_apply_edits_reports_diffs_and_skips_identical_files(tmp_path: Path) -> None:
    (tmp_path / "env.py").write_text("a = 1\n")
    applied = apply_edits(tmp_path, {"env.py": "a = 2\n", "physics.py": "g = 9.8\n"})
    by_path = {edit.path: edit for edit in applied}
    assert "-a = 1" in by_path["env.py"].diff and "+a = 2" in by_path["env.py"].diff
    assert by_path["physics.py"].created and by_path["physics.py"].stat() == "physics.py (+1 -0)"
    again = apply_edits(tmp_path, {"env.py": "a = 2\n"})
    assert not again[0].changed
    assert read_files(tmp_path) == {"env.py": "a = 2\n", "physics.py": "g = 9.8\n"}


@pytest.mark.parametrize(
    ("path", "port_files"),
    [
        (".git/config", (".py",)),
        ("__pycache__/x.pyc", (".py",)),
        ("__pycache__/env.py", (".py",)),
        (".git/hooks/post-checkout.py", (".py",)),
        ("src/.hidden/env.py", (".py",)),
        ("tests/.cases/case.toml", (".py",)),
        (".git/Cargo.toml", (".rs", "Cargo.toml")),
    ],
)
def test_an_edit_the_runs_history_would_not_keep_is_refused(
    tmp_path: Path, path: str, port_files: tuple[str, ...]
) -> None:
    # Written there, a file is in the port the next check runs but not in the commit that a
    # resume or a revert restores (git ignores `__pycache__`; `.git/` is git's own). Whole
    # files and search/replace edits both take their paths through `port_path`.
    with pytest.raises(EditParseError, match="hidden names and `__pycache__` are not port files"):
        port_path(path, tmp_path, port_files)
    if PATH_TOKEN.match(path):
        with pytest.raises(EditParseError, match="hidden names and `__pycache__`"):
            text = answer(f"### File: {path}", FENCE, "x = 1", FENCE)
            parse_answer(text, tmp_path, port_files=port_files)
    assert list(tmp_path.iterdir()) == []


def test_an_edit_deeper_than_the_driver_walks_a_port_is_refused(tmp_path: Path) -> None:
    # Written, it would fail every later read of the port (and the same step again on
    # resume); refused, the model is asked again.
    deep = "a/" * 40 + "env.py"
    with pytest.raises(EditParseError, match="more than 32 folders deep"):
        parse_answer(answer(f"### File: {deep}", FENCE, "x = 1", FENCE), tmp_path)
    assert list(tmp_path.iterdir()) == []
