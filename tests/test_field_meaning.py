"""`[state.describe]`: what a bridged field's values mean reaches the prompt, and `envport
check` names the bridged fields that say nothing (Connect Four's bridge: a column per list,
the player to move)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from envport.pipeline.prompting import prompt_builder
from envport.pipeline.spec_check import check_spec
from envport.runs.state import RunState
from envport.spec import load_spec

from helpers import ROOT, run_envport

CONNECT_FOUR = ROOT / "examples" / "connect_four"

DESCRIBED = """
[state.describe]
board = "a column's discs from the bottom up: 0 is player_0's, 1 is player_1's"
current_player = "the seat to move: 0 for player_0, 1 for player_1"
"""


def _copy(tmp_path: Path, describe: str) -> Path:
    copy = tmp_path / "connect_four"
    shutil.copytree(
        CONNECT_FOUR, copy, ignore=shutil.ignore_patterns("ports", "replay", "__pycache__")
    )
    toml = copy / "envport.toml"
    # The example's own table (its lines up to the next blank one) gives way to the one
    # under test.
    text = re.sub(r"\n\[state\.describe\]\n(?:[^\n]+\n)*", "\n", toml.read_text())
    assert "[state.describe]" not in text
    toml.write_text(text.rstrip() + "\n" + describe)
    return copy


def test_check_names_the_bridged_fields_without_a_description(tmp_path: Path) -> None:
    lines = check_spec(str(_copy(tmp_path, "")))
    warned = [line for line in lines if line.startswith("warn describe:")]
    assert len(warned) == 1, lines
    assert "board.c0" in warned[0] and "current_player" in warned[0], warned
    # A list's length leaf says what it counts by itself.
    assert ".length" not in warned[0], warned
    described = check_spec(str(_copy(tmp_path / "b", DESCRIBED)))
    assert "describe: every bridged field says what its values mean" in described


def test_a_description_of_no_field_is_one_line_and_exit_2(tmp_path: Path) -> None:
    spec = _copy(tmp_path, DESCRIBED + 'boards = "a typo"\n')
    done = run_envport("check", str(spec))
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "state.describe.boards" in lines[0], done.stderr
    assert "Traceback" not in done.stderr


def test_the_prompt_shows_each_field_with_what_its_values_mean(tmp_path: Path) -> None:
    spec = load_spec(_copy(tmp_path, DESCRIBED))
    builder = prompt_builder(spec, "jax", None)
    modules = spec.target("jax").modules
    state = RunState(
        run_id="r",
        spec_source="s",
        spec_name=spec.name,
        target="jax",
        model="replay:x",
        modules=modules,
        entry=modules[-1].name,
    )
    text = builder.context(state)
    lines = text.splitlines()
    # Each field on a line of its own: its measured type, then what its values mean.
    column = next(line for line in lines if line.strip().startswith("- `board.c3` "))
    assert column.endswith(
        ": a column's discs from the bottom up: 0 is player_0's, 1 is player_1's"
    )
    mover = next(line for line in lines if line.strip().startswith("- `current_player` "))
    assert mover.endswith(": the seat to move: 0 for player_0, 1 for player_1"), mover
    length = next(line for line in lines if line.strip().startswith("- `board.c3.length` "))
    assert length.endswith(": how many items of `board.c3` are in use"), length
