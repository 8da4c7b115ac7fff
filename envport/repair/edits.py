"""Whole-file edits extracted from a model's answer.

The prompts ask for every file as a fenced code block introduced by its path:

    ### File: physics.py
    ```python
    <the whole file>
    ```

Models drift from that shape, so the parser also takes the path from the fence's info string
(```` ```python env.py ````, ```` ```python title="env.py" ````) or from a `# file: env.py`
first line, accepts fences without a language tag, ignores prose and untitled snippets, and
copes with fences nested inside a file (a docstring quoting Markdown): for Python files it
prefers the closing fence that leaves a body which parses. Anything it cannot make sense of is
an `EditParseError` whose message goes back to the model in the one re-ask.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from envport.errors import EnvportError
from envport.io.tree import MAX_DEPTH

# Files a port may consist of: the driver never lets an answer write anything else.
PORT_SUFFIXES = (".py",)
# Proposed tests live under this prefix in answers, kept append-only. A proposed case
# (`tests/*.toml`: a start state and actions) is run by the harness, with the reference as
# the oracle; proposed Python is recorded for review, never run (docs/design.md, contract 6).
TESTS_PREFIX = "tests/"
CASE_SUFFIX = ".toml"

# File systems allow 255 bytes a name; the atomic write's temporary name adds 14 to it.
MAX_NAME_BYTES = 200
MAX_PATH_CHARS = 1024

FENCE = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
# A drive prefix is matched only so that such paths can be refused by name.
PATH_TOKEN = re.compile(r"^(?:[A-Za-z]:)?[\w.\-/\\]*[\w\-]\.[A-Za-z][A-Za-z0-9]{0,5}$")
_HEADER_WORDS = re.compile(r"^(?:file(?:name)?|path|new file|updated file)\s*[:=]?\s*", re.I)
_ELISION = re.compile(
    r"^\s*#.*(?:\.\.\.|…).*(?:unchanged|rest of|existing code|same as before|as before)", re.I
)


class EditParseError(EnvportError):
    """The answer has no usable file blocks; the message is shown to the model in a re-ask."""


@dataclass
class ParsedAnswer:
    """Files to write into the port, proposed tests, and the prose around them."""

    files: dict[str, str] = field(default_factory=dict)
    tests: dict[str, str] = field(default_factory=dict)
    prose: str = ""


@dataclass
class _Block:
    start: int  # line index of the opening fence
    end: int  # line index of the closing fence
    path: str | None
    body: list[str]
    info: str = ""


def answer_lines(text: str) -> list[str]:
    """The answer's lines, split where Python ends a line (LF, CRLF, CR) and nowhere else:
    `str.splitlines` also splits at form feeds and Unicode line separators, which would
    change a file that holds one in a string or a comment."""
    lines = re.split(r"\r\n|\r|\n", text)
    return lines[:-1] if lines and not lines[-1] else lines


def header_path(line: str) -> str | None:
    """The path a Markdown header line names, if the line is only a path (with decoration)."""
    text = line.strip()
    if not text or len(text) > 160:
        return None
    text = re.sub(r"^(?:#{1,6}|[-*+>]|\d+[.)])\s+", "", text)
    # Bold markers go; `__` only where it wraps words, so `__init__.py` keeps its name.
    text = text.replace("**", "")
    text = re.sub(r"(^|\s)__(\S(?:.*?\S)?)__(?=$|[\s:])", r"\1\2", text).strip()
    text = _HEADER_WORDS.sub("", text)
    text = text.strip("`'\" ")
    # "env.py (updated):", "env.py:" and "`env.py`" all name env.py.
    text = re.sub(r"\s*\([^)]{0,40}\)\s*", "", text).rstrip(":").strip("`'\" ")
    if PATH_TOKEN.match(text):
        return text
    # "Here is the fixed `env.py`:" introduces the block below it.
    quoted = re.findall(r"`([^`\s]+)`", line)
    paths = [q for q in quoted if PATH_TOKEN.match(q)]
    return paths[0] if line.rstrip().endswith(":") and len(paths) == 1 else None


def info_path(info: str) -> str | None:
    for token in re.split(r"[\s:]+", info.strip()):
        token = re.sub(r"^(?:title|path|file|filename)=", "", token).strip("`'\"{}")
        if PATH_TOKEN.match(token):
            return token
    return None


def _first_line_path(body: list[str]) -> str | None:
    if not body:
        return None
    match = re.match(r"^\s*(?:#|//)\s*(?:file(?:name)?|path)\s*:\s*(\S+)\s*$", body[0], re.I)
    return match.group(1) if match and PATH_TOKEN.match(match.group(1)) else None


def _closing_candidates(lines: list[str], start: int, fence: str, stop: int) -> list[int]:
    """Closing-fence positions for the fence opened at `start`, best first.

    First the one found by tracking nested fences (an opener with an info string nests, a bare
    fence closes the innermost), then every other bare fence of the same kind up to `stop`.
    """
    depth = 0
    tracked = None
    bare = []
    for index in range(start + 1, stop):
        match = FENCE.match(lines[index])
        if not match or match.group("fence")[0] != fence[0]:
            continue
        if len(match.group("fence")) < len(fence):
            continue
        if match.group("info").strip():
            if len(match.group("fence")) == len(fence):
                depth += 1
            continue
        bare.append(index)
        if tracked is None:
            if depth == 0:
                tracked = index
            else:
                depth -= 1
    if tracked is None:
        return bare
    return [tracked] + [index for index in bare if index != tracked]


def _parses(path: str | None, body: list[str]) -> bool:
    if path is None or not path.endswith(".py"):
        return True
    try:
        ast.parse("\n".join(body))
    except (SyntaxError, ValueError):
        return False
    return True


def _header_before(lines: list[str], start: int, floor: int) -> str | None:
    # The header is the nearest non-blank line above the fence (at most two lines up).
    index = start - 1
    while index >= floor and index >= start - 3:
        if lines[index].strip():
            return header_path(lines[index])
        index -= 1
    return None


def _blocks(text: str) -> list[_Block]:
    lines = answer_lines(text)
    blocks: list[_Block] = []
    floor = 0
    index = 0
    while index < len(lines):
        match = FENCE.match(lines[index])
        if not match:
            index += 1
            continue
        fence, info = match.group("fence"), match.group("info")
        path = info_path(info) or _header_before(lines, index, floor)
        # A file block can only end before the next block that names a file.
        stop = _next_file_opener(lines, index, fence) or len(lines)
        candidates = _closing_candidates(lines, index, fence, stop)
        if not candidates:
            if path is None:
                index += 1  # a stray fence in prose
                continue
            raise EditParseError(
                f"the code block for `{path}` is not closed (the answer may have been cut off); "
                "send the whole file again and end it with a closing fence"
            )
        body_path = path or _first_line_path(lines[index + 1 : candidates[0]])
        end = next(
            (c for c in candidates if _parses(body_path, lines[index + 1 : c])), candidates[0]
        )
        body = lines[index + 1 : end]
        blocks.append(_Block(index, end, body_path, body, info.strip().lower()))
        floor = end + 1
        index = end + 1
    return blocks


def _next_file_opener(lines: list[str], start: int, fence: str) -> int | None:
    """The line where the next file block begins (its header line), if any."""
    for index in range(start + 1, len(lines)):
        match = FENCE.match(lines[index])
        if not match or not match.group("info").strip():
            continue
        # A ~~~ block inside a ``` file is its content, and so is a shorter fence inside a
        # ```` file; a longer ```` fence after a file header is the next file, whose content
        # holds ``` (a renderer lengthens the fence for it).
        opener = match.group("fence")
        if opener[0] != fence[0] or len(opener) < len(fence):
            continue
        if info_path(match.group("info")):
            return index
        header = index - 1
        while header > start and not lines[header].strip():
            header -= 1
        if header > start and header_path(lines[header]):
            return header
    return None


def port_path(raw: str, port_dir: Path, port_files: tuple[str, ...] = PORT_SUFFIXES) -> str:
    """The path relative to the port directory that `raw` names, or an EditParseError.

    Absolute paths, `..` and symlinks that lead outside the port are refused: a model answer
    must never write anywhere but the port. `port_files` are the endings of the file names
    the target's ports consist of (".py"; ".rs" and "Cargo.toml" for a crate).
    """
    text = raw.strip().replace("\\", "/")
    while text.startswith("./"):
        text = text[2:]
    if text.startswith("/") or re.match(r"^[A-Za-z]:", text):
        raise EditParseError(f"`{raw}` is an absolute path; give paths relative to the port")
    parts = PurePosixPath(text).parts
    if ".." in parts:
        raise EditParseError(f"`{raw}` is outside the port directory; `..` is not allowed")
    if parts and parts[0] == "port" and len(parts) > 1:
        parts = parts[1:]  # "port/env.py": the model named the directory itself
    relative = PurePosixPath(*parts).as_posix() if parts else ""
    if not relative or relative == ".":
        raise EditParseError(f"`{raw}` does not name a file")
    _check_writable_name(raw, relative)
    _check_kept_by_history(raw, relative)
    root = port_dir.resolve()
    try:
        resolved = (root / relative).resolve()
    except (OSError, RuntimeError):  # a symlink loop, or a name the OS will not look up
        raise EditParseError(f"`{raw}` cannot be resolved inside the port directory") from None
    if not resolved.is_relative_to(root):
        raise EditParseError(f"`{raw}` leads outside the port directory")
    if resolved.is_dir() or any(
        parent.exists() and not parent.is_dir()
        for parent in resolved.parents
        if parent.is_relative_to(root)
    ):
        raise EditParseError(f"`{raw}` names a directory or passes through a file")
    if relative.startswith(TESTS_PREFIX) and relative.endswith(CASE_SUFFIX):
        return relative  # a proposed case: data the harness runs against the reference
    if not PurePosixPath(relative).name.endswith(port_files):
        allowed = ", ".join(port_files)
        raise EditParseError(
            f"`{raw}` is not a port file: a repair may change the port's files ({allowed}) "
            "only; the spec, its tolerances and the harness's tests are not yours to edit"
        )
    return relative


def _check_writable_name(raw: str, relative: str) -> None:
    """Refuse a name the file system would reject when the edit is written: an answer's
    path must fail here, as a parse error the model can fix, never as a crash later."""
    if any(ord(char) < 32 or ord(char) == 127 for char in relative):
        raise EditParseError(f"{raw!r} has control characters; give a plain relative path")
    try:
        encoded = [part.encode("utf-8") for part in relative.split("/")]
    except UnicodeEncodeError:
        raise EditParseError(f"{raw!r} is not valid text; give a plain relative path") from None
    if any(len(part) > MAX_NAME_BYTES for part in encoded) or len(relative) > MAX_PATH_CHARS:
        raise EditParseError(f"`{raw[:80]}...` is too long for a file name")
    if len(encoded) - 1 > MAX_DEPTH:  # the folders above the file
        # Deeper than the driver walks a port (envport.io.tree): refused now, as an answer
        # the model can fix, not later as a step that fails the same way on every resume.
        raise EditParseError(
            f"`{raw[:80]}...` is more than {MAX_DEPTH} folders deep; keep the port's files "
            "near its top"
        )


def _check_kept_by_history(raw: str, relative: str) -> None:
    """Refuse a name inside `.git/`, `__pycache__/` or any other hidden name: the run's git
    history does not keep such files (it ignores `__pycache__`; a `.git` folder is another
    repository), so a port written there would differ from the one the history restores,
    and a `.git/config` or `.git/hooks` file would be settings for git itself."""
    for part in PurePosixPath(relative).parts:
        if part.startswith(".") or part == "__pycache__":
            raise EditParseError(
                f"`{raw}` is inside `{part}`: hidden names and `__pycache__` are not port "
                "files (the run's history does not keep them); name a file outside them"
            )


def parse_answer(
    text: str,
    port_dir: Path,
    required: list[str] | None = None,
    port_files: tuple[str, ...] = PORT_SUFFIXES,
    *,
    may_be_empty: bool = False,
) -> ParsedAnswer:
    """The whole files and proposed tests in a model answer.

    `required` lists port paths the answer must contain (the module being generated);
    `port_files` the endings of the file names the port may have (`port_path`).
    `may_be_empty`: an answer without file blocks is prose only, not an error (the text
    left once search/replace edits were taken out of an answer).
    """
    if not text.strip() and not may_be_empty:
        raise EditParseError("the answer is empty")
    blocks = _blocks(text)
    _adopt_lone_block(blocks, required or [])
    parsed = ParsedAnswer()
    for block in blocks:
        if block.path is None:
            continue  # an untitled snippet in the explanation
        relative = port_path(block.path, port_dir, port_files)
        for line in block.body:
            if _ELISION.match(line):
                raise EditParseError(
                    f"the block for `{relative}` leaves code out ({line.strip()!r}); "
                    "send every file whole, without elisions"
                )
        content = "\n".join(block.body).rstrip("\n") + "\n"
        if relative.startswith(TESTS_PREFIX):
            parsed.tests[relative] = content
        else:
            parsed.files[relative] = content
    if not parsed.files and not parsed.tests and not may_be_empty:
        raise EditParseError(
            "no fenced code block with a file path was found; put each whole file in a fenced "
            "block preceded by a line `### File: <path>`"
        )
    # "m.py" and "m.py/n.py" in one answer cannot both be written: refuse them here.
    for path in parsed.files:
        if any(other.startswith(path + "/") for other in parsed.files):
            raise EditParseError(f"`{path}` is both a file and a folder in this answer")
    missing = [path for path in required or [] if path not in parsed.files]
    if missing:
        raise EditParseError(
            f"the answer has no whole-file block for {', '.join(f'`{m}`' for m in missing)}"
        )
    lines = answer_lines(text)
    kept = [True] * len(lines)
    for block in blocks:
        for index in range(block.start, min(block.end + 1, len(lines))):
            kept[index] = False
    parsed.prose = "\n".join(line for line, keep in zip(lines, kept, strict=True) if keep).strip()
    return parsed


# The language tags a lone untitled block may carry to be taken for the file asked for.
_TAGS = {".py": ("python", "py", "python3"), ".rs": ("rust", "rs")}


def _adopt_lone_block(blocks: list[_Block], required: list[str]) -> None:
    """One untitled block (in the file's language) and one file asked for: it is that file.

    Models asked for a single module sometimes drop the header; nothing else is ambiguous.
    """
    if len(required) != 1 or any(block.path for block in blocks):
        return
    untitled = [
        block
        for block in blocks
        if block.info in ("", *_TAGS.get(PurePosixPath(required[0]).suffix, ()))
        and block.body
        and _parses(required[0], block.body)
    ]
    if len(untitled) == 1:
        untitled[0].path = required[0]


def extract_block(text: str, languages: tuple[str, ...]) -> str | None:
    """The body of the first fenced block tagged with one of `languages` (for plans)."""
    lines = answer_lines(text)
    for index, line in enumerate(lines):
        match = FENCE.match(line)
        if not match:
            continue
        info = match.group("info").strip().lower()
        if info.split(" ")[0] in languages:
            candidates = _closing_candidates(lines, index, match.group("fence"), len(lines))
            if candidates:
                return "\n".join(lines[index + 1 : candidates[0]])
    return None
