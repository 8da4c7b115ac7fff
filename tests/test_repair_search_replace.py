"""Search/replace edits in repair answers: parsed from messy answers, applied all or none.

The answer texts below are scripted test inputs (hand-written), not model output.
"""

from __future__ import annotations

import difflib
import json
import re
from pathlib import Path

import pytest

from envport.pipeline.prompting import PromptBuilder, target_info
from envport.pipeline.sources.reading import read_sources
from envport.prompts.render import Prompts
from envport.repair.apply import apply_edits, read_files
from envport.repair.edits import EditParseError
from envport.repair.search_replace import parse_edit_answer, split_edits
from envport.runs.state import RunState
from envport.spec import load_spec

from helpers import CARTPOLE, ROOT

FENCE = "```"
ENV = (
    "import numpy as np\n"
    "\n"
    "\n"
    "def step(state, action):\n"
    "    reward = np.where(done, 0.0, 1.0)\n"
    "    return state, reward\n"
    "\n"
    "\n"
    "def reset():\n"
    "    return 0\n"
)
PHYSICS = "GRAVITY = 9.8\nMASS = 1.0\n"


def answer(*parts: str) -> str:
    return "\n".join(parts) + "\n"


def block(search: list[str], replace: list[str]) -> list[str]:
    return ["<<<<<<< SEARCH", *search, "=======", *replace, ">>>>>>> REPLACE"]


@pytest.fixture
def port(tmp_path: Path) -> Path:
    directory = tmp_path / "port"
    directory.mkdir()
    (directory / "env.py").write_text(ENV)
    (directory / "physics.py").write_text(PHYSICS)
    return directory


def parse(text: str, port: Path, required: list[str] | None = None) -> dict[str, str]:
    return parse_edit_answer(text, port, read_files(port), required).files


REWARD_FIX = block(["    reward = np.where(done, 0.0, 1.0)"], ["    reward = np.ones_like(done)"])
FIXED_ENV = ENV.replace("np.where(done, 0.0, 1.0)", "np.ones_like(done)")


def test_the_documented_shape_with_prose_around(port: Path) -> None:
    text = answer(
        "1. The terminating step earns 1.0 in the reference.",
        "",
        "### Edit: env.py",
        *REWARD_FIX,
        "",
        "That is the whole fix.",
    )
    parsed = parse_edit_answer(text, port, read_files(port))
    assert parsed.files == {"env.py": FIXED_ENV}
    assert "terminating step" in parsed.prose and "whole fix" in parsed.prose
    assert "SEARCH" not in parsed.prose and "np.ones_like" not in parsed.prose


def test_blocks_inside_a_code_fence_and_several_under_one_header(port: Path) -> None:
    text = answer(
        "### Edit: env.py",
        f"{FENCE}python",
        *REWARD_FIX,
        "",
        *block(["def reset():", "    return 0"], ["def reset():", "    return 1"]),
        FENCE,
        "Done.",
    )
    assert parse(text, port) == {"env.py": FIXED_ENV.replace("return 0", "return 1")}


def test_crlf_trailing_whitespace_and_no_final_newline(port: Path) -> None:
    (port / "physics.py").write_text("GRAVITY = 9.8   \nMASS = 1.0")  # no final newline
    text = "### Edit: physics.py\r\n<<<<<<< SEARCH\r\nGRAVITY = 9.8\r\n=======\r\n"
    text += "GRAVITY = 9.81  \r\n>>>>>>> REPLACE"  # and none at the end of the answer
    assert parse(text, port) == {"physics.py": "GRAVITY = 9.81  \nMASS = 1.0\n"}


def test_edits_to_one_file_apply_in_order(port: Path) -> None:
    # The second edit's SEARCH exists only once the first has been applied.
    text = answer(
        "### Edit: physics.py",
        *block(["GRAVITY = 9.8"], ["GRAVITY = 9.81", "G2 = GRAVITY * 2"]),
        "### Edit: physics.py",
        *block(["G2 = GRAVITY * 2"], ["G2 = GRAVITY + GRAVITY"]),
    )
    assert parse(text, port) == {
        "physics.py": "GRAVITY = 9.81\nG2 = GRAVITY + GRAVITY\nMASS = 1.0\n"
    }


def test_a_search_found_several_times_is_refused_with_where(port: Path) -> None:
    (port / "physics.py").write_text("x = 0\ny = 1\nx = 0  \n")
    text = answer("### Edit: physics.py", *block(["x = 0"], ["x = 1"]))
    with pytest.raises(EditParseError) as caught:
        parse(text, port)
    message = str(caught.value)
    assert "edit 1 (`physics.py`)" in message
    assert "occur 2 times in `physics.py` (from lines 1, 3)" in message
    assert "the port is unchanged" in message


def test_a_search_found_nowhere_quotes_the_nearest_lines(port: Path) -> None:
    # Indented wrong: the nearest lines are the right ones, quoted with their numbers.
    text = answer("### Edit: env.py", *block(["reward = np.where(done, 0.0, 1.0)"], ["x"]))
    with pytest.raises(EditParseError) as caught:
        parse(text, port)
    message = str(caught.value)
    assert "occur 0 times in `env.py`; the nearest are lines 5-5:" in message
    assert "   5 |     reward = np.where(done, 0.0, 1.0)" in message


def test_one_failed_edit_leaves_every_file_as_it_was(port: Path) -> None:
    before = read_files(port)
    text = answer(
        "### Edit: physics.py",
        *block(["GRAVITY = 9.8"], ["GRAVITY = 9.81"]),
        "### Edit: env.py",
        *block(["    return nothing"], ["    return 2"]),
    )
    with pytest.raises(EditParseError, match=r"1 of the answer's 2 edits could not be applied"):
        parse(text, port)
    assert read_files(port) == before


def test_every_failed_edit_is_named(port: Path) -> None:
    text = answer(
        "### Edit: env.py",
        *block(["nope"], ["x"]),
        "### Edit: physics.py",
        *block(["also nope"], ["y"]),
    )
    with pytest.raises(EditParseError) as caught:
        parse(text, port)
    assert "edit 1 (`env.py`)" in str(caught.value) and "edit 2 (`physics.py`)" in str(caught.value)


def test_an_edit_to_an_unknown_file_is_refused(port: Path) -> None:
    text = answer("### Edit: dynamics.py", *block(["x = 1"], ["x = 2"]))
    with pytest.raises(EditParseError) as caught:
        parse(text, port)
    message = str(caught.value)
    assert "`dynamics.py` is not a file of the port (its files: `env.py`, `physics.py`)" in message
    assert "send it whole under `### File: dynamics.py`" in message


def test_an_empty_search_creates_a_new_file_only(port: Path) -> None:
    created = answer("### Edit: helpers.py", *block([], ["def clip(x):", "    return x"]))
    assert parse(created, port) == {"helpers.py": "def clip(x):\n    return x\n"}
    existing = answer("### Edit: env.py", *block([""], ["x = 1"]))
    with pytest.raises(EditParseError, match="SEARCH part is empty"):
        parse(existing, port)


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("../envport.toml", "outside the port"),
        ("/etc/passwd", "absolute path"),
        ("../../x.py", "outside the port"),
        ("envport.toml", "not a port file"),
        ("tests/case.toml", "propose a test whole"),
    ],
)
def test_paths_outside_the_port_are_refused(port: Path, path: str, why: str) -> None:
    text = answer(f"### Edit: {path}", *block(["a"], ["b"]))
    with pytest.raises(EditParseError, match=why):
        parse(text, port)


def test_a_symlink_out_of_the_port_is_refused(port: Path, tmp_path: Path) -> None:
    outside = tmp_path / "secret.py"
    outside.write_text("KEY = 1\n")
    (port / "link.py").symlink_to(outside)
    text = answer("### Edit: link.py", *block(["KEY = 1"], ["KEY = 2"]))
    with pytest.raises(EditParseError, match="leads outside the port"):
        parse_edit_answer(text, port, {"link.py": "KEY = 1\n"})
    assert outside.read_text() == "KEY = 1\n"


def test_whole_files_and_edits_in_one_answer(port: Path) -> None:
    text = answer(
        "The reward and a new constant.",
        "### Edit: env.py",
        f"{FENCE}python",
        *REWARD_FIX,
        FENCE,
        "",
        "### File: physics.py",
        f"{FENCE}python",
        "GRAVITY = 9.8",
        "MASS = 2.0",
        FENCE,
        "",
        "### File: tests/terminal.toml",
        f"{FENCE}toml",
        "[[case]]",
        "actions = [1]",
        FENCE,
    )
    parsed = parse_edit_answer(text, port, read_files(port))
    assert parsed.files == {"env.py": FIXED_ENV, "physics.py": "GRAVITY = 9.8\nMASS = 2.0\n"}
    assert parsed.tests == {"tests/terminal.toml": "[[case]]\nactions = [1]\n"}


def test_a_file_sent_whole_and_edited_is_refused(port: Path) -> None:
    text = answer(
        "### Edit: env.py",
        *REWARD_FIX,
        "### File: env.py",
        f"{FENCE}python",
        "x = 1",
        FENCE,
    )
    with pytest.raises(EditParseError, match="both sent whole and edited"):
        parse(text, port)


def test_fenced_code_inside_a_block_is_content(port: Path) -> None:
    doc = ['    """Usage:', "", f"    {FENCE}python", "    step(s, a)", f"    {FENCE}", '    """']
    text = answer(
        "### Edit: env.py",
        FENCE,
        *block(["def reset():"], ["def reset():", *doc]),
        FENCE,
    )
    expected = ENV.replace("def reset():\n", "def reset():\n" + "\n".join(doc) + "\n")
    assert parse(text, port) == {"env.py": expected}


@pytest.mark.parametrize(
    "header",
    [
        ["### Edit: env.py"],
        ["**Edit: `env.py`**"],
        ["Edit: env.py"],
        ["### File: env.py"],  # a whole-file header over an edit block names its file too
        ["env.py", f"{FENCE}python"],  # path line, then the fence (closed after the block)
        [f"{FENCE}python env.py"],  # path in the fence's info string
    ],
)
def test_header_variants(port: Path, header: list[str]) -> None:
    closing = [FENCE] if header[-1].startswith(FENCE) else []
    assert parse(answer(*header, *REWARD_FIX, *closing), port) == {"env.py": FIXED_ENV}


def test_prose_between_the_header_and_its_blocks(port: Path) -> None:
    text = answer(
        "### Edit: env.py",
        "First the reward:",
        *REWARD_FIX,
        "Then the reset value:",
        *block(["    return 0"], ["    return 1"]),
    )
    assert parse(text, port) == {"env.py": FIXED_ENV.replace("return 0", "return 1")}


def test_a_block_without_a_file_is_refused(port: Path) -> None:
    with pytest.raises(
        EditParseError, match=r"edit 1 names no file: put a line `### Edit: <path>`"
    ):
        parse(answer("Change this:", *REWARD_FIX), port)


def test_an_unclosed_block_is_refused(port: Path) -> None:
    text = answer("### Edit: env.py", "<<<<<<< SEARCH", "x = 1", "=======", "x = 2")
    with pytest.raises(EditParseError, match=r"edit 1 \(`env.py`\) is not closed"):
        parse(text, port)


def test_an_edit_header_over_a_whole_file_says_what_to_do(port: Path) -> None:
    text = answer("### Edit: env.py", f"{FENCE}python", "x = 1", FENCE)
    with pytest.raises(EditParseError, match=r"use `### File: env.py`"):
        parse(text, port)


def test_an_answer_of_whole_files_only_parses_as_before(port: Path) -> None:
    text = answer("### File: env.py", f"{FENCE}python", "x = 1", FENCE)
    assert parse(text, port) == {"env.py": "x = 1\n"}
    with pytest.raises(EditParseError, match="no fenced code block"):
        parse("I would change the reward.", port)


def test_a_required_module_may_come_from_an_edit_creating_it(port: Path) -> None:
    text = answer("### Edit: reward.py", *block([], ["R = 1.0"]))
    assert parse(text, port, required=["reward.py"]) == {"reward.py": "R = 1.0\n"}
    with pytest.raises(EditParseError, match=r"no whole-file block for `model\.py`"):
        parse(text, port, required=["model.py"])


def test_applied_edits_are_written_with_their_diff(port: Path) -> None:
    text = answer("### Edit: env.py", *REWARD_FIX)
    applied = apply_edits(port, parse(text, port))
    assert (port / "env.py").read_text() == FIXED_ENV
    assert [edit.stat() for edit in applied] == ["env.py (+1 -1)"]


def test_split_keeps_the_prose_and_drops_the_wrapping() -> None:
    text = answer("Why.", "### Edit: a.py", FENCE, *block(["x"], ["y"]), FENCE, "After.")
    edits, rest = split_edits(text)
    assert [(e.number, e.path, e.search, e.replace) for e in edits] == [(1, "a.py", ("x",), ("y",))]
    assert rest == "Why.\nAfter."


def test_a_failed_write_puts_back_what_the_answer_already_wrote(port: Path) -> None:
    before = read_files(port)
    # The second file cannot be written (its folder would be a file): the first, already
    # written, is put back and the new one removed.
    files = {"physics.py": "GRAVITY = 1.0\n", "new.py": "x = 1\n", "env.py/x.py": "y = 2\n"}
    with pytest.raises(OSError):
        apply_edits(port, files)
    assert read_files(port) == before
    assert not (port / "new.py").exists()


# --- the prompts that offer the format ---------------------------------------------------------


def prompt_builder() -> PromptBuilder:
    spec = load_spec(CARTPOLE)
    return PromptBuilder(Prompts(), spec, read_sources(spec), target_info("numpy"))


def run_state(**changes: object) -> RunState:
    spec = load_spec(CARTPOLE)
    base = RunState(
        run_id="r",
        spec_source="s",
        spec_name="cartpole",
        target="numpy",
        model="replay:x",
        modules=spec.target("numpy").modules,
        entry=spec.target("numpy").entry,
    )
    return base.model_copy(update=changes)


def test_repairs_and_optimisation_offer_edits_and_generation_does_not() -> None:
    builder = prompt_builder()
    files = {"physics.py": "G = 1\n", "env.py": "E = 1\n"}
    repair = builder.repair(run_state(phase="composed", iteration=1), files)
    optimize = builder.optimize(run_state(phase="optimize"), files)
    generate, _ = builder.generate(run_state(), {})
    for text in (repair, optimize):
        # The example names a file of this port.
        assert re.search(r"### Edit: (physics|env)\.py\n<<<<<<< SEARCH\n", text)
        assert "must occur exactly once" in text
    assert "<<<<<<< SEARCH" not in generate
    reask = builder.reask("edit 1 (`env.py`): ...", False, [], False, edits=True)
    assert "`### Edit: <path>` and SEARCH/REPLACE blocks" in reask
    assert "### Edit" not in builder.reask("no block", False, [], False)


def test_the_example_the_prompt_shows_parses_and_applies(port: Path) -> None:
    """The format as the prompt states it, its placeholders filled in, is what the parser
    takes: the template and the parser cannot drift apart."""
    shown = Prompts().render("answer_edits.j2", example_path="env.py").splitlines()
    start = shown.index("### Edit: env.py")
    end = shown.index(">>>>>>> REPLACE", start)
    example = [
        "    reward = np.where(done, 0.0, 1.0)" if line.startswith("<the current") else line
        for line in shown[start : end + 1]
    ]
    example = ["    reward = 1.0" if line.startswith("<the lines") else line for line in example]
    parsed = parse_edit_answer("\n".join(shown[:start] + example), port, read_files(port))
    assert parsed.files == {"env.py": ENV.replace("np.where(done, 0.0, 1.0)", "1.0")}


# --- the shipped replay sessions' repairs, as edits ---------------------------------------------


def as_edits(before: dict[str, str], after: dict[str, str]) -> str:
    """An answer of search/replace edits that turns `before` into `after`: each hunk with
    the fewest lines of context that make its SEARCH lines occur once."""
    parts = ["The fix, as edits."]
    for path, new_text in after.items():
        old, new = before[path].splitlines(), new_text.splitlines()
        parts.append(f"### Edit: {path}")
        for context in range(1, len(old) + 1):
            groups = list(difflib.SequenceMatcher(None, old, new).get_grouped_opcodes(context))
            searches = [old[group[0][1] : group[-1][2]] for group in groups]
            if all(s and occurrences(old, s) == 1 for s in searches):
                break
        for group, search in zip(groups, searches, strict=True):
            replace = new[group[0][3] : group[-1][4]]
            parts += ["<<<<<<< SEARCH", *search, "=======", *replace, ">>>>>>> REPLACE"]
    return "\n".join(parts) + "\n"


def occurrences(lines: list[str], search: list[str]) -> int:
    size = len(search)
    return sum(lines[i : i + size] == search for i in range(len(lines) - size + 1))


def _repairs_files(session: Path) -> bool:
    """A session with a repair or an optimisation round (Crafter's JAX session has none: its
    modules are right the first time)."""
    entries = json.loads(session.read_text())["entries"]
    return any(e["phase"] in ("repair", "optimize") for e in entries)


SESSIONS = [s for s in sorted(ROOT.glob("examples/*/replay/*/session.json")) if _repairs_files(s)]


@pytest.mark.parametrize("session", SESSIONS, ids=lambda p: "/".join(p.parts[-4:-1]))
def test_every_shipped_repair_sent_as_edits_gives_the_same_port(
    session: Path, tmp_path: Path
) -> None:
    entries = json.loads(session.read_text())["entries"]
    answers = {e["answer_file"]: e["phase"] for e in entries}
    # The session's directory is named after its target (replay/<target>).
    port_files = target_info(session.parent.name).port_files
    files: dict[str, str] = {}
    repairs = 0
    for name, phase in answers.items():
        if phase == "plan":
            continue  # a plan answers with the modules in TOML, not with files
        text = (session.parent / name).read_text()
        parsed = parse_edit_answer(text, tmp_path, files, port_files=port_files)
        # Optimisation rounds, like repairs, may answer with edits of the files there.
        if phase in ("repair", "optimize") and any(path in files for path in parsed.files):
            changed = {p: t for p, t in parsed.files.items() if p in files and files[p] != t}
            edits = as_edits(files, changed)
            again = parse_edit_answer(edits, tmp_path, files, port_files=port_files)
            assert again.files == changed
            repairs += 1
        files.update(parsed.files)
    assert repairs >= 1
