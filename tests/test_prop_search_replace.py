"""Property: a search/replace edit applies exactly where its SEARCH lines occur once, and an
answer with any edit that does not apply changes nothing.

Files are drawn from a few short lines (so repeats are common) plus lines that look like
structure in an answer (fences, headers); the SEARCH part is a window of the file, the
answer's style is drawn too: fenced or bare, LF or CRLF, trailing spaces added to the
SEARCH lines. The expected outcome is computed by brute force over the file's lines.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from test_prop_paths import any_path, assert_inside, planted_port, write_and_check

from envport.repair.apply import read_files
from envport.repair.edits import EditParseError
from envport.repair.search_replace import parse_edit_answer
from envport.verifiers.draws.hypo import keep_caches_out_of_cwd

keep_caches_out_of_cwd()

LINES = [
    "",
    "x = 1",
    "    return x",
    "def f(x):",
    "```",
    "```python",
    "~~~",
    "### File: b.py",
    "### Edit: b.py",
    "# note",
    "\ty = 2",
]
file_lines = st.lists(st.sampled_from(LINES), min_size=1, max_size=14)
new_lines = st.lists(st.sampled_from(["z = 3", "    return z", "", "```"]), max_size=4)


def occurrences(lines: list[str], window: list[str]) -> int:
    size = len(window)
    return sum(1 for start in range(len(lines) - size + 1) if lines[start : start + size] == window)


def render(search: list[str], replace: list[str], fenced: bool, crlf: bool, spaces: bool) -> str:
    shown = [line + "  " if spaces else line for line in search]
    body = ["<<<<<<< SEARCH", *shown, "=======", *replace, ">>>>>>> REPLACE"]
    lines = [
        "Here is the fix.",
        "### Edit: env.py",
        *(["```python", *body, "```"] if fenced else body),
    ]
    lines.append("Done.")
    return ("\r\n" if crlf else "\n").join(lines) + "\n"


@settings(max_examples=300, database=None, derandomize=True, deadline=None)
@given(
    lines=file_lines,
    data=st.data(),
    replace=new_lines,
    fenced=st.booleans(),
    crlf=st.booleans(),
    spaces=st.booleans(),
)
def test_an_edit_applies_once_or_not_at_all(
    lines: list[str],
    data: st.DataObject,
    replace: list[str],
    fenced: bool,
    crlf: bool,
    spaces: bool,
) -> None:
    start = data.draw(st.integers(0, len(lines) - 1))
    size = data.draw(st.integers(1, len(lines) - start))
    search = lines[start : start + size]
    original = "\n".join(lines) + "\n"
    text = render(search, replace, fenced, crlf, spaces)
    with tempfile.TemporaryDirectory() as port:
        try:
            files = parse_edit_answer(text, Path(port), {"env.py": original}).files
        except EditParseError as error:
            files = None
            message = str(error)
    count = occurrences(lines, search)
    if not any(line.strip() for line in search):
        assert files is None and "SEARCH part is empty" in message
    elif count == 1:
        expected = lines[:start] + replace + lines[start + size :]
        assert files == {"env.py": "\n".join(expected).rstrip("\n") + "\n"}
    else:
        assert files is None
        assert f"its SEARCH lines occur {count} times in `env.py`" in message
        assert "the port is unchanged" in message


@settings(max_examples=150, database=None, derandomize=True, deadline=None)
@given(lines=file_lines, picks=st.lists(st.tuples(st.integers(0, 13), new_lines), max_size=4))
def test_edits_apply_in_order_each_to_the_result_before(
    lines: list[str], picks: list[tuple[int, list[str]]]
) -> None:
    """A sequence of one-line edits gives what applying them one by one gives, or, if any
    one's SEARCH is not unique at its turn, nothing."""
    current = list(lines)
    blocks: list[str] = []
    expected: list[str] | None = current
    for position, replace in picks:
        target = lines[position % len(lines)]
        blocks += ["<<<<<<< SEARCH", target, "=======", *replace, ">>>>>>> REPLACE"]
        if expected is not None:
            found = [i for i, line in enumerate(expected) if line == target]
            if len(found) != 1 or not target.strip():
                expected = None
            else:
                expected = expected[: found[0]] + replace + expected[found[0] + 1 :]
    if not blocks:
        return
    text = "\n".join(["### Edit: env.py", *blocks]) + "\n"
    with tempfile.TemporaryDirectory() as port:
        try:
            files = parse_edit_answer(text, Path(port), {"env.py": "\n".join(lines) + "\n"}).files
        except EditParseError:
            files = None
    if expected is None:
        assert files is None
    else:
        assert files == {"env.py": "\n".join(expected).rstrip("\n") + "\n"}


@settings(max_examples=200, database=None, derandomize=True, deadline=None)
@given(raw=any_path, create=st.booleans())
def test_an_edit_lands_inside_the_port_or_is_refused(raw: str, create: bool) -> None:
    """Any path an `### Edit:` header names, creating a file or changing one, is refused or
    resolves inside the port (symlinks planted there included), and writing the result
    touches nothing outside it (docs/design.md, contract 6)."""
    search = [] if create else ["x = 1"]
    text = "\n".join([f"### Edit: {raw}", "<<<<<<< SEARCH", *search, "=======", "z = 3"])
    text += "\n>>>>>>> REPLACE\n"
    with planted_port() as (port, outside):
        try:
            files = parse_edit_answer(text, port, read_files(port)).files
        except EditParseError:
            return
        for relative in files:
            assert_inside(relative, port)
        write_and_check(files, port, outside)
