"""The static review of one `.rs` file of a Rust port, at the level of paths and items.

Rust has no `eval`: what a crate can reach is what it names. So the review reads the
source with comments and literals blanked out (line numbers kept) and refuses a path into
`std`, `core` or `alloc` whose module is not on the allowlist (`std::env`, `core::arch`,
`use std::{fs, ...}`), an alias of those roots (`use std as s`, `extern crate std as s`),
a path rooted at an operating-system crate (`libc`), a foreign-function block or `#[link]`
(a port declaring `getpid` itself), and the macros that read the build's environment or
files or run assembly.
"""

from __future__ import annotations

import re

from envport.verifiers.source_review import rules
from envport.verifiers.source_review.python import Finding

# Strings are blanked first, so `extern "C" {` reads `extern     {`.
# A root anywhere in a path: `x::std::env` reaches std through a module re-exporting it.
_PATH = re.compile(r"(?<!\w)(?:::\s*)?\b(std|core|alloc)\s*::\s*(\{|\*|\$|[A-Za-z_]\w*)")
_USE = re.compile(r"\buse\b[^;]*;")
_BARE_ROOT = re.compile(r"(?<![\w:])(std|core|alloc)\s*(?:\bas\b|;|,|\})")
_CRATE_ALIAS = re.compile(r"\bextern\s+crate\s+(std|core|alloc)\s+as\b")
_MACRO_ROOT = re.compile(r"\$(?!crate\b)[A-Za-z_]\w*\s*::")
_FOREIGN = re.compile(r"\bextern\s*\{")
_LINK = re.compile(r"#\s*!?\s*\[\s*(link|path)\b")
# Conditional compilation on the build's settings, except a crate's own tests.
_CFG = re.compile(r"#\s*!?\s*\[\s*(cfg|cfg_attr)\s*\((?!\s*test\s*\))")
_MACRO = re.compile(r"(?<![\w])([A-Za-z_]\w*)\s*!\s*[(\[{]")
_SYSTEM_ROOT = re.compile(r"(?<!\w)(?:::\s*)?\b([A-Za-z_]\w*)\s*::")
_EXTERN_CRATE = re.compile(r"\bextern\s+crate\s+([A-Za-z_]\w*)")


def _blank(source: str) -> str:
    """The source with comments, strings and character literals turned into spaces, line
    breaks kept, so a pattern never matches inside text and lines still count."""
    out = list(source)
    i, n = 0, len(source)

    def blank(start: int, end: int) -> None:
        for k in range(start, min(end, n)):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = source[i]
        if source.startswith("//", i):
            end = source.find("\n", i)
            end = n if end < 0 else end
            blank(i, end)
            i = end
        elif source.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if source.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif source.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            blank(i, j)
            i = j
        elif raw := re.match(r"b?r(#*)\"", source[i : i + 300]):
            if i and (source[i - 1].isalnum() or source[i - 1] == "_"):
                i += 1
                continue
            closing = '"' + raw.group(1)
            end = source.find(closing, i + raw.end())
            end = n if end < 0 else end + len(closing)
            blank(i, end)
            i = end
        elif c == '"':
            j = i + 1
            while j < n and source[j] != '"':
                j += 2 if source[j] == "\\" else 1
            blank(i, j + 1)
            i = j + 1
        elif c == "'" and (char := re.match(r"'(?:\\.[^']*|[^\\'])'", source[i : i + 16])):
            blank(i, i + char.end())
            i += char.end()
        else:
            i += 1
    return "".join(out)


def _brace_heads(text: str, start: int) -> list[str]:
    """The first name of each item of the use tree `{...}` opening at `start`
    (`{env, sync::Arc, self}` -> env, sync, self)."""
    depth, item, heads = 0, "", []
    for c in text[start:]:
        if c == "{":
            depth += 1
            if depth == 1:
                continue
        elif c == "}":
            depth -= 1
            if depth == 0:
                break
        if depth == 1 and c == ",":
            heads.append(item)
            item = ""
        elif depth >= 1:
            item += c
    heads.append(item)
    names = [re.match(r"\s*([A-Za-z_]\w*|\*)", head) for head in heads]
    return [name.group(1) for name in names if name]


def review_rust(source: str, file: str, allow_crates: tuple[str, ...]) -> list[Finding]:
    """The refusals in one `.rs` file, in line order."""
    text = _blank(source)
    found: list[Finding] = []

    def refuse(at: int, what: str, why: str, rule: str) -> None:
        found.append(Finding(file, text.count("\n", 0, at) + 1, f"`{what}`", why, rule))

    for match in _PATH.finditer(text):
        root, head = match.group(1), match.group(2)
        names = _brace_heads(text, match.start(2)) if head == "{" else [head]
        for name in names:
            if name == "$":
                why = "a path into std built by a macro (the review cannot read it)"
                refuse(match.start(), f"{root}::$", why, "import")
            elif name == "self" or (name not in rules.RUST_STD_MODULES and name != "*"):
                why = (
                    f"`{name}` is not among the `{root}` modules a step needs (they leave out "
                    "the process, files, the clock, the network and the machine)"
                )
                refuse(match.start(), f"{root}::{name}", why, "import")
            elif name == "*":
                refuse(match.start(), f"{root}::*", "a glob of a crate root", "import")
    for use in _USE.finditer(text):
        for match in _BARE_ROOT.finditer(use.group(0)):
            why = "names a crate root bare (an alias the review cannot follow)"
            refuse(use.start() + match.start(), f"use {match.group(1)}", why, "import")
    for match in _CRATE_ALIAS.finditer(text):
        refuse(
            match.start(), f"extern crate {match.group(1)} as", "an alias of a crate root", "import"
        )
    for match in _MACRO_ROOT.finditer(text):
        why = "a path whose root a macro fills in (the review cannot read it)"
        refuse(match.start(), match.group(0).strip(), why, "import")
    for match in _EXTERN_CRATE.finditer(text):
        name = match.group(1)
        if name not in allow_crates:
            # Not needed since the 2018 edition; `pub extern crate std` re-exports a root.
            why = "a crate named as an item (the spec may allow it with targets.rust.allow_crates)"
            refuse(match.start(), f"extern crate {name}", why, "import")
    for match in _SYSTEM_ROOT.finditer(text):
        name = match.group(1)
        if name in rules.RUST_SYSTEM_CRATES and name not in allow_crates:
            why = "the operating system's interface (the spec may allow it with allow_crates)"
            refuse(match.start(), f"{name}::", why, "import")
    for match in _FOREIGN.finditer(text):
        why = "declares foreign functions (the C library's `getpid`, `getenv`, `time`)"
        refuse(match.start(), "extern { ... }", why, "foreign")
    for match in _LINK.finditer(text):
        attribute = match.group(1)
        why = "links a native library" if attribute == "link" else "reads a file as a module"
        refuse(match.start(), f"#[{attribute}]", why, "foreign")
    for match in _CFG.finditer(text):
        why = "compiles differently by the build's settings (the harness's are not a user's)"
        refuse(match.start(), f"#[{match.group(1)}(...)]", why, "macro")
    for match in _MACRO.finditer(text):
        why_macro = rules.RUST_MACROS.get(match.group(1))
        if why_macro is not None:
            refuse(match.start(), f"{match.group(1)}!", why_macro, "macro")
    unique = {(f.line, f.what, f.rule): f for f in found}
    return sorted(unique.values(), key=lambda finding: finding.line)
