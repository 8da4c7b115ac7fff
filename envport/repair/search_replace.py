"""Search/replace edits in a model's answer: part of a file changed without resending it.

A repair or an optimisation round may answer with edits instead of whole files (generation
stays whole-file). The format, as `prompts/answer_edits.j2` states it:

    ### Edit: env.py
    <<<<<<< SEARCH
            reward = np.where(terminated, 0.0, 1.0)
    =======
            reward = np.ones(self.num_envs)
    >>>>>>> REPLACE

One header may be followed by several blocks, and the blocks may sit inside a code fence
(the fence lines around them are dropped). Between the markers every line is content, code
fences included. The file is named by the nearest `### Edit: <path>` line above a block
(any header `edits.parse_answer` takes for a whole file works too, as does a path in the
fence's info string); a block right after another block edits the same file.

An edit applies only where its SEARCH lines occur exactly once in the file as it is then:
whole lines, indentation exact, trailing whitespace and line ends ignored. Edits to one
file apply in order, each to the result of the one before. An empty SEARCH creates a file
the port does not have yet. The answer's edits apply all or none: they are applied in memory
to the port's current files, and any edit that does not apply (its SEARCH found 0 or several
times, an unknown file, a path outside the port) makes the whole answer an `EditParseError`
naming each failed edit, which the one re-ask quotes; nothing is written. Whole-file blocks
in the same answer are parsed from the text left once the edit blocks are taken out; one
answer may not both send a file whole and edit it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from envport.repair.edits import (
    FENCE,
    PORT_SUFFIXES,
    TESTS_PREFIX,
    EditParseError,
    ParsedAnswer,
    answer_lines,
    header_path,
    info_path,
    parse_answer,
    port_path,
)

SEARCH = re.compile(r"^ {0,3}<{5,9} ?SEARCH\s*$")
DIVIDER = re.compile(r"^ {0,3}={5,9}\s*$")
REPLACE = re.compile(r"^ {0,3}>{5,9} ?REPLACE\s*$")
_EDIT_HEADER = re.compile(
    r"^\s*(?:#{1,6}\s*)?(?:\*\*)?\s*edit(?:ing)?\s*:\s*(?P<path>.+?)\s*(?:\*\*)?\s*:?\s*$", re.I
)
# A failed edit quotes at most this many of the file's lines near where it was meant to go.
QUOTE_LINES = 8
QUOTE_WIDTH = 120


@dataclass(frozen=True)
class Edit:
    number: int  # 1-based, in the order of the answer (edits apply in this order)
    path: str  # as the answer names it; checked by `port_path` when applied
    search: tuple[str, ...]
    replace: tuple[str, ...]


def edit_header(line: str) -> str | None:
    """The path a `### Edit: <path>` line names, if the line is one."""
    match = _EDIT_HEADER.match(line)
    if not match:
        return None
    # One token: "### Edit: the reward" is prose. Any token, so that a path outside the port
    # is refused by `port_path` with its reason rather than read as prose.
    path = match.group("path").strip("`'\"* ")
    return path if path and not any(char.isspace() for char in path) else None


def _named(line: str) -> str | None:
    return edit_header(line) or header_path(line)


def split_edits(text: str) -> tuple[list[Edit], str]:
    """The answer's edit blocks, and its text without them (headers and wrapping fences
    taken out too), for the whole-file parser."""
    lines = answer_lines(text)
    taken = [False] * len(lines)
    edits: list[Edit] = []
    index = 0
    while index < len(lines):
        if not SEARCH.match(lines[index]):
            index += 1
            continue
        number = len(edits) + 1
        path = _path_above(lines, index, taken, edits, number)
        divider = _next(lines, index + 1, DIVIDER, SEARCH)
        end = _next(lines, divider + 1, REPLACE, SEARCH) if divider is not None else None
        if divider is None or end is None:
            raise EditParseError(
                f"edit {number} (`{path}`) is not closed: a block is `<<<<<<< SEARCH`, the "
                "current lines, `=======`, the new lines, `>>>>>>> REPLACE`, each marker alone "
                "on its line"
            )
        edits.append(
            Edit(
                number,
                path,
                tuple(lines[index + 1 : divider]),
                tuple(lines[divider + 1 : end]),
            )
        )
        for covered in range(index, end + 1):
            taken[covered] = True
        _take_closing_fence(lines, end, taken)
        index = end + 1
    rest = [line for line, gone in zip(lines, taken, strict=True) if not gone]
    for line in rest:
        named = edit_header(line)
        if named is not None:
            raise EditParseError(
                f"the `{line.strip()}` header has no `<<<<<<< SEARCH` ... `>>>>>>> REPLACE` "
                f"block after it; to send `{named}` whole, use `### File: {named}`"
            )
    return edits, "\n".join(rest)


def _next(
    lines: list[str], start: int, marker: re.Pattern[str], stop: re.Pattern[str]
) -> int | None:
    """The first line from `start` matching `marker`, unless a `stop` line comes first."""
    for index in range(start, len(lines)):
        if marker.match(lines[index]):
            return index
        if stop.match(lines[index]):
            return None
    return None


def _path_above(
    lines: list[str], index: int, taken: list[bool], edits: list[Edit], number: int
) -> str:
    """The file an edit block at `index` names: the header above it (past blank lines and
    the fences that wrap blocks), or the previous block's file when that block ends right
    above. The fences and the header found are taken out of the text."""
    fences: list[int] = []
    above = index - 1
    while above >= 0 and (not lines[above].strip() or FENCE.match(lines[above])):
        if lines[above].strip():
            fences.append(above)
        above -= 1
    path = None
    for fence in fences:  # nearest first: ```python env.py
        match = FENCE.match(lines[fence])
        path = info_path(match.group("info")) if match else None
        if path:
            break
    if path is None and above >= 0 and not taken[above]:
        path = _named(lines[above])
        if path is not None:
            taken[above] = True
    if path is None:
        # Prose between the header (or the previous block) and this block: the nearest
        # `### Edit:` line above, else the previous block's file.
        while above >= 0 and not taken[above]:
            path = edit_header(lines[above])
            if path is not None:
                taken[above] = True
                break
            above -= 1
        if path is None and edits and above >= 0:
            path = edits[-1].path
    if path is None:
        raise EditParseError(
            f"edit {number} names no file: put a line `### Edit: <path>` right above its "
            "`<<<<<<< SEARCH`"
        )
    for fence in fences:
        taken[fence] = True
    return path


def _take_closing_fence(lines: list[str], end: int, taken: list[bool]) -> None:
    """A bare fence right after a block (blank lines between) closes the fence wrapping it."""
    below = end + 1
    while below < len(lines) and not lines[below].strip():
        below += 1
    if below < len(lines):
        match = FENCE.match(lines[below])
        if match and not match.group("info").strip():
            taken[below] = True


def apply_search_replace(
    edits: list[Edit],
    files: Mapping[str, str],
    port_dir: Path,
    port_files: tuple[str, ...] = PORT_SUFFIXES,
) -> dict[str, str]:
    """The new text of every file the edits touch, or an EditParseError naming every edit
    that does not apply (then none applies)."""
    working: dict[str, list[str]] = {}
    problems: list[str] = []
    for edit in edits:
        problem = _apply_one(edit, files, port_dir, working, port_files)
        if problem:
            problems.append(f"- edit {edit.number} (`{edit.path}`): {problem}")
    if problems:
        count = f"{len(problems)} of the answer's {len(edits)} edits"
        raise EditParseError(
            f"{count} could not be applied, so none was (the port is unchanged):\n"
            + "\n".join(problems)
            + "\nCopy each SEARCH part from the current file exactly (whole lines, "
            "indentation included), or send the file whole under `### File: <path>`."
        )
    return {path: "\n".join(lines).rstrip("\n") + "\n" for path, lines in working.items()}


def _apply_one(
    edit: Edit,
    files: Mapping[str, str],
    port_dir: Path,
    working: dict[str, list[str]],
    port_files: tuple[str, ...],
) -> str | None:
    """Apply `edit` to `working` (files by path, as lines); what went wrong, if anything."""
    try:
        relative = port_path(edit.path, port_dir, port_files)
    except EditParseError as error:
        return str(error)
    if relative.startswith(TESTS_PREFIX):
        return f"propose a test whole, under `### File: {relative}`; edits change port files"
    search = list(edit.search)
    empty = not any(line.strip() for line in search)
    if relative not in working and relative not in files:
        if empty:
            working[relative] = list(edit.replace)  # a new file
            return None
        known = ", ".join(f"`{path}`" for path in sorted(files)) or "none"
        return (
            f"`{relative}` is not a file of the port (its files: {known}); "
            f"to create it, send it whole under `### File: {relative}`"
        )
    lines = working.get(relative)
    if lines is None:
        lines = answer_lines(files[relative])
    if empty:
        return "its SEARCH part is empty; quote the lines to replace"
    found = _occurrences(lines, search)
    if len(found) == 1:
        start = found[0]
        working[relative] = lines[:start] + list(edit.replace) + lines[start + len(search) :]
        return None
    working.setdefault(relative, lines)
    if not found:
        return f"its SEARCH lines occur 0 times in `{relative}`" + _nearest(lines, search)
    where = ", ".join(str(start + 1) for start in found[:6]) + (", ..." if len(found) > 6 else "")
    return (
        f"its SEARCH lines occur {len(found)} times in `{relative}` (from lines {where}); "
        "include lines around them so they occur once"
    )


def _occurrences(lines: list[str], search: list[str]) -> list[int]:
    want = [line.rstrip() for line in search]
    have = [line.rstrip() for line in lines]
    size = len(want)
    return [start for start in range(len(have) - size + 1) if have[start : start + size] == want]


def _nearest(lines: list[str], search: list[str]) -> str:
    """The file's lines most like the SEARCH part (most lines equal but for indentation),
    quoted with their numbers; nothing when no line is alike."""
    want = [line.strip() for line in search]
    have = [line.strip() for line in lines]
    best, best_score = 0, 0
    for start in range(max(1, len(have) - len(want) + 1)):
        window = have[start : start + len(want)]
        score = sum(1 for a, b in zip(window, want, strict=False) if a == b and a)
        if score > best_score:
            best, best_score = start, score
    if best_score == 0:
        return ""
    shown = lines[best : best + min(len(want), QUOTE_LINES)]
    quoted = "\n".join(
        f"    {best + offset + 1:>4} | {line[:QUOTE_WIDTH]}" for offset, line in enumerate(shown)
    )
    last = best + len(shown)
    return f"; the nearest are lines {best + 1}-{last}:\n{quoted}"


def parse_edit_answer(
    text: str,
    port_dir: Path,
    files: Mapping[str, str],
    required: list[str] | None = None,
    *,
    port_files: tuple[str, ...] = PORT_SUFFIXES,
) -> ParsedAnswer:
    """A repair's or an optimisation round's answer: whole files, search/replace edits to
    the port's current `files`, or both. The edited files come back whole in `files`."""
    edits, rest = split_edits(text)
    if not edits:
        return parse_answer(text, port_dir, required, port_files)
    parsed = parse_answer(rest, port_dir, port_files=port_files, may_be_empty=True)
    changed = apply_search_replace(edits, files, port_dir, port_files)
    both = sorted(set(changed) & set(parsed.files))
    if both:
        raise EditParseError(
            f"`{both[0]}` is both sent whole and edited in this answer; send one or the other"
        )
    parsed.files.update(changed)
    missing = [path for path in required or [] if path not in parsed.files]
    if missing:
        raise EditParseError(
            f"the answer has no whole-file block for {', '.join(f'`{m}`' for m in missing)}"
        )
    return parsed
