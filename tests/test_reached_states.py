"""`[state.reached]`: L1 and L2 draw start states from positions the reference reaches in play.

On Connect Four (real PettingZoo): the drawn states are exactly states the reference passed
through in the spec's episodes, played by its game players; without the table the fields'
own draws are back; a spec asking for no episodes is one line, exit 2; a spec's book adds
every line of its depth from each of its positions, each kept with the reference's answer.
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
from envport.verifiers.draws.reached import reached_states, reached_steps
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
    # Played once per spec in a process, whichever reference asks.
    assert reached_steps(spec, Reference(spec)) is reached_steps(spec, reference)
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


BOOK = '''
def positions(env):
    """Two openings: the centre column taken by each player, then the edge by the first."""
    for columns in ([3, 3], [0]):
        env.reset(seed=0)
        for column in columns:
            env.step(column)
        yield
'''


def test_a_book_adds_every_line_of_its_depth_from_each_position(tmp_path: Path) -> None:
    spec_dir = _spec_with(
        tmp_path,
        "[state.reached]\nepisodes = 1\nsteps = 3\nbook = 'harness/book.py:positions'\ndepth = 2",
    )
    (spec_dir / "harness" / "book.py").write_text(BOOK)
    spec = load_spec(spec_dir)
    reference = Reference(spec)
    steps = reached_steps(spec, reference)
    # One game of 3 moves, then from each of the 2 positions its 7 moves and 7 replies each.
    assert len(steps) == 3 + 2 * (7 + 7 * 7)
    first_book = steps[3 : 3 + 7]
    start = first_book[0].before
    assert all(_key(step.before) == _key(start) for step in first_book)
    assert [step.action for step in first_book] == list(range(7))
    assert int(np.asarray(start["current_player"])) == 0  # two pieces down: player_0 again
    # Each kept answer is the reference's own from that state.
    for step in (first_book[2], steps[3 + 7 + 10]):
        reference.write_state(step.before)
        again = reference.step(step.action)
        assert np.array_equal(again.obs, step.transition.obs)
        assert np.array_equal(again.reward, step.transition.reward)
    # The second ply starts from the positions after each first move.
    replies = steps[3 + 7 : 3 + 7 + 7 * 7]
    assert len({_key(step.before) for step in replies}) == 7
    assert all(_key(step.before) != _key(start) for step in replies)


_LOAD_AGAIN = """
import sys
from envport.spec import load_spec
from envport.targets.reference import Reference
from envport.verifiers.draws.reached import reached_steps

spec = load_spec(sys.argv[1])
reference = Reference(spec)
calls = []
step = reference.step
reference.step = lambda action: calls.append(action) or step(action)
steps = reached_steps(spec, reference)
print(len(steps), len(calls))
"""


def test_the_play_is_kept_on_disk_by_what_it_follows_from(tmp_path: Path) -> None:
    """A second process loads the episodes the first played (no reference step); a harness
    file changed is another key, played again."""
    spec_dir = _spec_with(tmp_path, "[state.reached]\nepisodes = 2")
    env = user_env(ENVPORT_CACHE_DIR=str(tmp_path / "cache"))

    def played() -> tuple[int, int]:
        done = subprocess.run(
            [sys.executable, "-c", _LOAD_AGAIN, str(spec_dir)],
            capture_output=True, text=True, timeout=600, cwd=ROOT, env=env, check=True,
        )  # fmt: skip
        kept, stepped = done.stdout.split()
        return int(kept), int(stepped)

    kept, stepped = played()
    assert kept > 0 and stepped >= kept  # played (the players try moves on it too)
    assert list((tmp_path / "cache" / "reached").glob("*.pickle.gz"))
    assert played() == (kept, 0)  # loaded: the reference not stepped at all
    bridge = spec_dir / "harness" / "reference.py"
    bridge.write_text(bridge.read_text() + "\n# changed\n")
    again, stepped_again = played()
    assert again == kept and stepped_again == stepped  # the bridge changed: played again
