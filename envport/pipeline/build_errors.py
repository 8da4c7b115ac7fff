"""A compiled port's build failure as a repair reads it: each compiler error with its line.

The worker reports a failed `cargo build` as one line (the compiler's first errors in its
short format, `src/lib.rs:61:14: error[E0308]: mismatched types: ...`, joined by "; "), which
is what `envport verify` prints. A repair does better with the code in view, so here each
error becomes a block: its `file:line:col` line, then that line of the port's file with a
caret under the column. The port's files are read as text; nothing of the port runs here.
"""

from __future__ import annotations

import re
from pathlib import Path

# One compiler message of the short format, up to the next one or the end of the line.
_MESSAGE = re.compile(
    r"(?P<file>[\w./-]+\.rs):(?P<line>\d+):(?P<col>\d+): (?P<text>.+?)"
    r"(?=; [\w./-]+\.rs:\d+:\d+: |; and \d+ more$|$)"
)
_BUILD_FAILED = "cargo build failed: "
# Characters of a quoted source line: enough for any sane line, bounded for a hostile one.
MAX_LINE_CHARS = 200


def compiler_errors(error: str, port: Path) -> str | None:
    """The build failure in `error` as one block per compiler error, or None when `error`
    is not a build failure."""
    head, found, rest = error.partition(_BUILD_FAILED)
    if not found:
        return None
    blocks = [_block(match, port) for match in _MESSAGE.finditer(rest)]
    if not blocks:
        return None
    more = re.search(r"; and (\d+) more$", rest)
    tail = f"\n\n(and {more.group(1)} more errors)" if more else ""
    return f"{head}{_BUILD_FAILED.strip()}\n\n" + "\n\n".join(blocks) + tail


def _block(match: re.Match[str], port: Path) -> str:
    where = f"{match['file']}:{match['line']}:{match['col']}"
    lines = [f"{where}: {match['text'].strip()}"]
    source = _source_line(port, match["file"], int(match["line"]))
    if source is not None:
        number = match["line"]
        caret = max(int(match["col"]) - 1, 0)
        lines.append(f"{number} | {source}")
        if caret < len(source):
            lines.append(f"{' ' * len(number)} | {' ' * caret}^")
    return "\n".join(lines)


def _source_line(port: Path, relative: str, number: int) -> str | None:
    """Line `number` of the port's file, if the path stays inside the port and exists."""
    root = port.resolve()
    path = (root / relative).resolve()
    if not path.is_relative_to(root) or not path.is_file() or number < 1:
        return None
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    if number > len(lines):
        return None
    return lines[number - 1].rstrip()[:MAX_LINE_CHARS]
