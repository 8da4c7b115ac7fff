"""`envport check` refuses a spec whose declarations the reference does not bear out: each
refusal one line, exit 2, naming the key and what the reference (or the file) actually has.
Each spec here is an example's own with one declaration made wrong, as a user writes it."""

from __future__ import annotations

import shutil
from pathlib import Path

from helpers import ROOT, run_envport

EXAMPLES = ROOT / "examples"


def _copy(tmp_path: Path, name: str, old: str, new: str) -> Path:
    copy = tmp_path / name
    shutil.copytree(EXAMPLES / name, copy, ignore=shutil.ignore_patterns("ports", "replay"))
    spec = copy / "envport.toml"
    text = spec.read_text()
    assert old in text, old
    spec.write_text(text.replace(old, new, 1))
    return copy


def _refused(copy: Path, *phrases: str) -> None:
    done = run_envport("check", str(copy))
    assert done.returncode == 2, done.stdout + done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    for phrase in phrases:
        assert phrase in lines[0], lines[0]


def test_an_observation_grid_declared_across_the_view_is_refused(tmp_path: Path) -> None:
    # Divergences would name cells that do not exist (`obs[6][5]` of a 6-row view).
    copy = _copy(tmp_path, "connect_four", "shape = [6, 7, 2]", "shape = [7, 6, 2]")
    _refused(copy, "observation.grid.shape", "[7, 6, 2]", "shape [6, 7, 2]")


def test_a_flat_state_field_read_as_a_grid_of_another_size_is_refused(tmp_path: Path) -> None:
    copy = _copy(tmp_path, "chess", "shape = [8, 8]", "shape = [8, 9]")
    _refused(copy, "state.grids.board.shape", "[8, 9] holds 72 cells", "holds 64 values")


def test_more_channel_names_than_the_grid_has_planes_is_refused(tmp_path: Path) -> None:
    copy = _copy(tmp_path, "connect_four", '"mine", "theirs"]', '"mine", "theirs", "empty"]')
    _refused(copy, "observation.grid.channels", "3 names", "2 channels per cell")


def test_a_state_grid_declared_in_another_shape_is_refused(tmp_path: Path) -> None:
    copy = _copy(tmp_path, "minatar_breakout", 'axes = "yx"\n', 'axes = "yx"\nshape = [10, 8]\n')
    _refused(copy, "state.grids.brick_map.shape", "[10, 8]", "shape [10, 10]")


def test_code_names_that_stop_short_of_the_codes_held_are_refused(tmp_path: Path) -> None:
    # The chess board's pieces run to code 12 (black king); five names cover 0 to 4.
    copy = _copy(
        tmp_path,
        "chess",
        'codes = { piece = [".", "P", "N", "B", "R", "Q", "K", "p", "n", "b", "r", "q", "k"] }',
        'codes = { piece = [".", "P", "N", "B", "R"] }',
    )
    _refused(copy, "state.grids.board.codes.piece", "5 names", "holds code 12")


def test_a_book_naming_a_missing_function_is_refused(tmp_path: Path) -> None:
    copy = _copy(tmp_path, "chess", '"harness/book.py:positions"', '"harness/book.py:openings"')
    _refused(copy, "state.reached.book", "no `openings`", "`positions`")


def test_moves_naming_a_missing_file_is_refused(tmp_path: Path) -> None:
    copy = _copy(tmp_path, "chess", '"harness/moves.py:name"', '"harness/names.py:name"')
    _refused(copy, "game.moves", "names.py does not exist")


def test_probes_naming_a_missing_file_are_refused(tmp_path: Path) -> None:
    copy = _copy(tmp_path, "cartpole", '"probes/jax.py"', '"probes/jaxx.py"')
    _refused(copy, "targets.jax.probes", "jaxx.py does not exist")


def test_a_policy_naming_a_missing_function_is_refused(tmp_path: Path) -> None:
    copy = _copy(tmp_path, "connect_four", 'policy.py:centre"', 'policy.py:middle"')
    _refused(copy, "levels.l3.policy", "no `middle`", "`centre`")


def test_bench_refuses_an_anchor_of_another_game() -> None:
    # A ratio to chess's speed says nothing of a Connect Four port's.
    game = EXAMPLES / "connect_four"
    done = run_envport(
        "bench", str(game), "--port", str(game / "ports" / "numpy"), "--anchor", "pgx:chess"
    )
    assert done.returncode == 2, done.stdout + done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert "--anchor pgx:chess: an anchor of another game (chess)" in lines[0]
    assert "connect_four" in lines[0]


def _port_without_mask(tmp_path: Path) -> Path:
    """Connect Four's known-good NumPy port whose `init` leaves out `legal_action_mask`
    (its `step` still has it: only the start lacks it, so play alone finds it late)."""
    port = tmp_path / "numpy"
    shutil.copytree(EXAMPLES / "connect_four" / "ports" / "numpy", port)
    env = port / "env.py"
    start = (
        "    return _begin(np.zeros((num_envs, ROWS, COLUMNS), np.int8), "
        "np.zeros(num_envs, np.int32))"
    )
    text = env.read_text()
    assert start in text
    env.write_text(
        text.replace(
            start,
            start.replace("return ", "state = ")
            + '\n    del state["legal_action_mask"]\n    return state',
        )
    )
    return port


def test_check_loads_a_game_port_and_refuses_an_init_without_a_contract_field(
    tmp_path: Path,
) -> None:
    port = _port_without_mask(tmp_path)
    done = run_envport("check", str(EXAMPLES / "connect_four"), "--port", str(port))
    assert done.returncode == 2, done.stdout + done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert f"--port {port}" in lines[0]
    assert "without `legal_action_mask` (it holds board, current_player" in lines[0]


def test_verify_fails_such_a_port_at_load_not_after_play(tmp_path: Path) -> None:
    port = _port_without_mask(tmp_path)
    done = run_envport(
        "verify", str(EXAMPLES / "connect_four"), "--port", str(port), "--levels", "l1"
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "failed in `load`" in done.stderr and "without `legal_action_mask`" in done.stderr
