"""Property: any path a model answer names is refused, or resolves inside the port directory.

Paths are built from the pieces that have broken path checks elsewhere (`..`, absolute
and drive prefixes, backslashes, trailing dots, NUL and other controls, lone surrogates,
look-alike Unicode dots, very long names) and from symlinks planted in the port: one to
a directory outside, one inside, a dangling one to outside, an absolute one and a loop.
An accepted path must also be writable by `apply_edits` without touching anything outside
(docs/design.md, contract 6: a repair may change the port's `.py` files only).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from hypothesis import example, given, settings
from hypothesis import strategies as st

from envport.repair.apply import apply_edits
from envport.repair.edits import CASE_SUFFIX, TESTS_PREFIX, EditParseError, parse_answer, port_path
from envport.verifiers.draws.hypo import keep_caches_out_of_cwd

# Hypothesis's own caches go under envport's cache, as in a verify run, not ./.hypothesis.
keep_caches_out_of_cwd()

FENCE = "```"
PIECES = [
    "..",
    ".",
    "",
    "...",
    "port",
    "tests",
    "env.py",
    "m.py",
    "sub",
    "link_out",
    "link_in",
    "link_abs",
    "dangling.py",
    "loop",
    "~",
    "C:",
    "c:\\",
    "\\\\server\\share",
    "é",
    "\u2024\u2024",  # one-dot leaders, which look like ".."
    "\uff0e\uff0e",  # fullwidth full stops
    "\x00",
    "a\nb",
    " ",
    "\ud800",
    "x" * 120,
    "y" * 260,
]
SUFFIXES = ["", ".py", ".py.", ".py ", ".PY", ".toml", ".py\x00", ".pyc", "/"]
SEPARATORS = ["/", "\\", "//", "/./"]
LEADS = ["", "", "/", "./", "C:\\", "C:/", "\\", "port/", "tests/", "tests/../"]

piece = st.one_of(st.sampled_from(PIECES), st.text(max_size=12))
nasty_path = st.builds(
    lambda lead, parts, seps, suffix: (
        lead + "".join(p + s for p, s in zip(parts, seps, strict=False))[: -1 or None] + suffix
    ),
    st.sampled_from(LEADS),
    st.lists(piece, min_size=1, max_size=5),
    st.lists(st.sampled_from(SEPARATORS), min_size=5, max_size=5),
    st.sampled_from(SUFFIXES),
)
any_path = st.one_of(nasty_path, st.text(max_size=40), st.text(max_size=300))


@contextmanager
def planted_port() -> Iterator[tuple[Path, Path]]:
    """A port directory with hostile symlinks, beside a directory that must stay untouched."""
    with tempfile.TemporaryDirectory() as base:
        root = Path(base)
        outside, port = root / "outside", root / "port"
        outside.mkdir()
        (outside / "secret.py").write_text("SECRET = 1\n")
        port.mkdir()
        (port / "env.py").write_text("x = 1\n")
        (port / "sub").mkdir()
        (port / "link_out").symlink_to(outside, target_is_directory=True)
        (port / "link_in").symlink_to(port / "sub", target_is_directory=True)
        (port / "link_abs").symlink_to("/")
        (port / "dangling.py").symlink_to(outside / "new.py")
        (port / "loop").symlink_to(port / "loop")
        yield port, outside


def snapshot(directory: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(directory)): path.read_bytes()
        for path in directory.rglob("*")
        if path.is_file()
    }


def assert_inside(relative: str, port: Path) -> None:
    """What an accepted path must be: relative, no `..`, resolving under the port."""
    pure = PurePosixPath(relative)
    assert not pure.is_absolute() and "\\" not in relative
    assert ".." not in pure.parts and "\x00" not in relative
    root = port.resolve()
    assert (root / relative).resolve().is_relative_to(root)
    if relative.startswith(TESTS_PREFIX):
        assert relative.endswith((CASE_SUFFIX, ".py"))
    else:
        assert relative.endswith(".py")


def write_and_check(files: dict[str, str], port: Path, outside: Path) -> None:
    """Port files are written for real, and nothing outside the port changes."""
    before = snapshot(outside)
    applied = apply_edits(port, files)
    root = port.resolve()
    for edit in applied:
        target = (port / edit.path).resolve()
        assert target.is_relative_to(root) and target.is_file()
        assert target.read_text(encoding="utf-8") == files[edit.path]
    assert snapshot(outside) == before
    assert not (outside / "new.py").exists()


@settings(max_examples=400, database=None, derandomize=True, deadline=None)
@example(raw="a\x00.py")
@example(raw="loop/x.py")
@example(raw="\ud800.py")
@given(raw=any_path)
def test_a_path_is_refused_or_resolves_inside_the_port(raw: str) -> None:
    with planted_port() as (port, outside):
        try:
            relative = port_path(raw, port)
        except EditParseError:
            return  # refused, with the one error the driver turns into a re-ask
        assert_inside(relative, port)
        if not relative.startswith(TESTS_PREFIX):
            write_and_check({relative: "y = 2\n"}, port, outside)


@settings(max_examples=200, database=None, derandomize=True, deadline=None)
@example(raws=["y" * 260 + ".py"], in_info=[True, True, True])  # past the name limit
@example(raws=["env.py/x.py"], in_info=[False, False, False])  # through an existing file
@example(raws=["m.py", "m.py/n.py"], in_info=[False, False, False])  # a file, then a folder
@example(raws=["n/m.py", "n"], in_info=[False, False, False])
@given(
    raws=st.lists(any_path, min_size=1, max_size=3),
    in_info=st.lists(st.booleans(), min_size=3, max_size=3),
)
def test_every_path_parsed_from_an_answer_is_inside_and_writable(
    raws: list[str], in_info: list[bool]
) -> None:
    """Through the parser: headers and info strings, several files in one answer."""
    parts = []
    for raw, info in zip(raws, in_info, strict=False):
        parts += [f"{FENCE}python {raw}"] if info else [f"### File: {raw}", f"{FENCE}python"]
        parts += ["z = 3", FENCE, ""]
    with planted_port() as (port, outside):
        try:
            parsed = parse_answer("\n".join(parts), port)
        except EditParseError:
            return
        for relative in [*parsed.files, *parsed.tests]:
            assert_inside(relative, port)
        write_and_check(parsed.files, port, outside)


def test_the_planted_symlinks_are_what_the_properties_rely_on() -> None:
    """The examples above mean something only if the hostile links are refused by name."""
    with planted_port() as (port, _):
        for raw in ["link_out/x.py", "link_abs/tmp/x.py", "dangling.py", "loop/x.py", "loop"]:
            try:
                port_path(raw, port)
            except EditParseError:
                continue
            raise AssertionError(f"{raw} was accepted")
        assert port_path("link_in/x.py", port) == "link_in/x.py"
        assert port_path("port\\sub\\x.py", port) == "sub/x.py"
        assert os.path.islink(port / "loop")
