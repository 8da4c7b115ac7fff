"""Property: files rendered in the answer format the prompts ask for parse back unchanged.

The format is `envport/prompts/answer_format.j2`: a `### File: <path>` line, then the whole
file in a fenced block, fenced with four backticks (or more) when the file has a line that
starts with three. Contents are arbitrary: fences of both kinds, `### File:` lines and
`# file:` first lines inside code, Markdown headers, CRLF line ends, Unicode line
separators. What comes back is the file with LF line ends and one final newline, which is
how the port's files are written.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from envport.repair.edits import CASE_SUFFIX, TESTS_PREFIX, parse_answer
from envport.verifiers.draws.hypo import keep_caches_out_of_cwd

# Hypothesis's own caches go under envport's cache, as in a verify run, not ./.hypothesis.
keep_caches_out_of_cwd()

TRICKY_LINES = [
    "",
    "```",
    "```python",
    "````",
    "   ```",
    "~~~",
    "~~~python",
    "```python other.py",
    "### File: other.py",
    "### File: tests/case.toml",
    "# file: z.py",
    "**env.py**",
    "`env.py`:",
    "Here is the fixed `env.py`:",
    "def f():",
    "    return 1",
    '"""',
    "x = '''",
    "\t",
]
# Any character but the ones that end lines in every reader, surrogates (not writable as
# UTF-8) and `#` (a `# ... rest unchanged` line is an elision the parser refuses on purpose).
plain_text = st.text(
    alphabet=st.characters(exclude_categories=("Cs",), exclude_characters="#\r\n"),
    max_size=30,
)
line = st.one_of(st.sampled_from(TRICKY_LINES), plain_text)
contents = st.builds(
    lambda lines, ending, final: ending.join(lines) + (ending if final else ""),
    st.lists(line, max_size=12),
    st.sampled_from(["\n", "\r\n"]),
    st.booleans(),
)
name = st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True)
port_file = st.builds(
    lambda folders, stem: "/".join([*folders, stem]) + ".py", st.lists(name, max_size=2), name
)
case_file = st.builds(lambda stem: f"{TESTS_PREFIX}{stem}{CASE_SUFFIX}", name)
answer_files = st.dictionaries(
    st.one_of(port_file, case_file), contents, min_size=1, max_size=4
).filter(lambda files: not any(a.startswith(b[:-3] + "/") for a in files for b in files))

INTRO = "The bug was the sign of the force."
OUTRO = "That should fix it."


def fence_for(content: str) -> str:
    """The fence the prompt asks for: longer than any backtick run opening a line."""
    runs = [len(m.group(1)) for m in re.finditer(r"(?m)^ {0,3}(`{3,})", content)]
    return "`" * max([3, *(run + 1 for run in runs)])


def render(files: dict[str, str]) -> str:
    parts = [INTRO, ""]
    for path, content in files.items():
        fence = fence_for(content)
        language = "toml" if path.endswith(CASE_SUFFIX) else "python"
        body = content if content.endswith(("\n", "\r\n")) or not content else content + "\n"
        parts.append(f"### File: {path}\n{fence}{language}\n{body}{fence}\n")
    parts.append(OUTRO)
    return "\n".join(parts)


def as_written(content: str) -> str:
    """A file as the parser gives it back: LF line ends and one final newline."""
    return content.replace("\r\n", "\n").replace("\r", "\n").rstrip("\n") + "\n"


@settings(max_examples=300, database=None, derandomize=True, deadline=None)
@example(files={"env.py": "x = '\u2028'\n"})  # a line separator inside a string literal
@example(files={"env.py": "a\x0cb\x85c\n"})  # form feed and NEL are not line ends in Python
@example(files={"env.py": "doc = '''\n### File: b.py\n~~~python\nx\n~~~\n'''\n"})
@example(files={"a.py": "```\n", "b.py": "y = 1\r\n"})
@example(files={"__init__.py": "", "pkg/__init__.py": "x = 1\n", "tests/__0.toml": ""})
@given(files=answer_files)
def test_rendered_files_parse_back_unchanged(files: dict[str, str]) -> None:
    with tempfile.TemporaryDirectory() as port:
        parsed = parse_answer(render(files), Path(port))
    expected = {path: as_written(content) for path, content in files.items()}
    assert {**parsed.files, **parsed.tests} == expected
    assert set(parsed.tests) == {path for path in files if path.startswith(TESTS_PREFIX)}
    # The prose is what lies outside the blocks: the text around them and the header lines.
    headers = [f"### File: {path}" for path in files]
    prose = [line for line in parsed.prose.splitlines() if line.strip()]
    assert prose == [INTRO, *headers, OUTRO]


@settings(max_examples=100, database=None, derandomize=True, deadline=None)
# An unclosed docstring before a file whose fence is longer: the first file's block must not
# run on into the next one (found by a draw in another process's order).
@example(files={"_.py": "", "a.py": '"""', "c.py": '```\n"""'})
@given(files=answer_files)
def test_the_required_module_is_found_whatever_its_contents(files: dict[str, str]) -> None:
    """The driver asks for the module being generated by name; it is always there."""
    required = [path for path in files if not path.startswith(TESTS_PREFIX)]
    with tempfile.TemporaryDirectory() as port:
        parsed = parse_answer(render(files), Path(port), required=required)
    assert sorted(parsed.files) == sorted(required)
