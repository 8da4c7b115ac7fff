"""Untrusted text made inert before any printer shows it: the one function every printer
(terminal, outcome.md, the HTML report, review and batch tables) passes such text through.

A port's error, a model's answer or a server's reply may carry terminal escape sequences
(cursor moves, colours, OSC window titles and clipboard writes) or invisible reordering
characters. Shown raw, they can rewrite what a terminal displays ("verified" over a run
that gave up). Here every such character is shown escaped (\\x1b, \\u202e) instead of obeyed.
"""

from __future__ import annotations

import re
import sys
from typing import Any, TextIO

from rich.console import Console

# C0 controls except tab and newline, DEL, C1 controls (0x9b is a one-byte CSI to some
# terminals), and the characters that reorder or hide text: bidi overrides and isolates,
# zero-width marks, line and paragraph separators, the byte-order mark; and what no file
# format may hold: lone surrogates (no UTF-8 encoder writes them) and the noncharacters
# U+FFFE and U+FFFF (XML 1.0 forbids them and most C0 controls, even as references).
_CONTROL = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069"
    "\ud800-\udfff\ufeff\ufffe\uffff]"
)
# What starts a Markdown construct inside a line: code, emphasis, links and images (`!` and
# `>` matter only beside these), raw HTML and autolinks, table cells, strikethrough, and the
# backslash itself.
_MARKDOWN_INLINE = re.compile(r"([\\`*_\[\]<|~])")


def _shown(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def inert(text: Any) -> str:
    """`text` as a string whose control characters and escape sequences are shown escaped."""
    return _CONTROL.sub(_shown, str(text))


class InertConsole(Console):
    """A rich console that shows every string it is given through `inert`: envport's own
    styling still works (it is added by rich, after), a string's escapes do not."""

    def print(self, *objects: Any, **kwargs: Any) -> None:
        super().print(*(inert(o) if isinstance(o, str) else o for o in objects), **kwargs)


def markdown_line(text: Any) -> str:
    """`text` as one line of Markdown that renders as the text itself: line breaks become
    spaces (a line of its own could start a heading, a list or a fence) and the characters
    that open inline constructs are backslash-escaped. For the Markdown a printer writes;
    `inert` still applies."""
    return _MARKDOWN_INLINE.sub(r"\\\1", " ".join(str(text).splitlines()))


def code_block(text: Any, info: str = "") -> str:
    """`text` as a fenced Markdown code block whose fence is longer than any run of
    backticks in it, so no line of the text can close it (a port's error holding a line of
    three backticks would end a fixed fence, and whatever followed would render as the
    report's own headings, links and HTML)."""
    body = str(text)
    longest = max((len(run) for run in re.findall("`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{body}\n{fence}"


def say(text: Any, file: TextIO | None = None) -> None:
    """One line to stderr (or `file`), made inert: the plain `print` of error messages."""
    print(inert(text), file=file or sys.stderr)
