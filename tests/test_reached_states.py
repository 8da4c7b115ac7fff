"""`[state.reached]`: L1 and L2 draw start states from positions the reference reaches in play.

On Connect Four (real PettingZoo): the drawn states are exactly states the reference passed
through in the spec's episodes, played by its game players; without the table the fields'
own draws are back; a spec asking for no episodes is one line, exit 2.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import seed as hypothesis_seed

from envport.spec import load_spec
from envport.targets.reference import Reference
from envport.verifiers.draws.reached import reached_states
from envport.verifiers.draws.strategies import draws_for, state_strategy

from helpers import ROOT, user_env

CONNECT_FOUR = ROOT / "examples" / "connect_four"


def _spec_with(tmp_path: Path, table: str) -> Path:
    copy = tmp_path / "connect_four"
    shutil.copytree(CONNECT_FOUR, copy, ignore=shutil.ignore_patterns("ports", "__pycache__"))
    toml = copy / "envport.toml"
    toml.write_text(f"{toml.read_text()}\n{table}\n")
    return copy


def _drawn(spec: Any, reference: Reference, count: int) -> list[dict[str, np.ndarray]]:
    found: list[dict[str, np.ndarray]] = []
    strategy = state_strategy(spec, draws_for(spec, reference))

    @hypothesis_seed(3)
    @settings(max_examples=count, database=None, deadline=None)
    @given(strategy)
    def collect(state: dict[str, np.ndarray]) -> None:
        found.append(state)

    collect()
    return found


def _key(state: dict[str, Any]) -> bytes:
    return b"".join(np.asarray(state[k]).tobytes() for k in sorted(state))


def test_drawn_states_are_states_the_reference_reached(tmp_path: Path) -> None:
    spec = load_spec(_spec_with(tmp_path, "[state.reached]\nepisodes = 5"))
    reference = Reference(spec)
    reached = reached_states(spec, reference)
    assert len(reached) > 5 * 7  # five games of at least seven moves each
    assert reached_states(spec, reference) is reached  # played once per reference
    pool = {_key(state) for state in reached}
    drawn = _drawn(spec, reference, 40)
    assert drawn and all(_key(state) in pool for state in drawn)
    # Positions from the whole of the games, not only their starts.
    assert len({_key(state) for state in drawn}) > 10


def test_without_the_table_the_fields_draw_as_before() -> None:
    spec = load_spec(CONNECT_FOUR)
    reference = Reference(spec)
    assert reached_states(spec, reference) == ()
    drawn = _drawn(spec, reference, 20)
    # The declared fields only: no board_history-like leaves of a full state read.
    assert all(set(state) <= set(reference.read_state()) for state in drawn)
    assert any(int(state["board.c0.length"]) > 0 for state in drawn)


def test_no_episodes_is_one_line_and_exit_2(tmp_path: Path) -> None:
    spec = _spec_with(tmp_path, "[state.reached]\nepisodes = 0")
    done = subprocess.run(
        [sys.executable, "-m", "envport", "check", str(spec)],
        capture_output=True,
        text=True,
        env=user_env(),
        timeout=120,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "state.reached.episodes" in lines[0], done.stderr
    assert "Traceback" not in done.stderr
