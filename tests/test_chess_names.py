"""A chess divergence names what differs in chess's terms (examples/chess/envport.toml): a
square of the board by rank and file with its piece, an observation plane by square and
plane name, a legal-action mask entry by the move it is for the player to move. The HTML
report draws both boards."""

from __future__ import annotations

import chess
import numpy as np
from pettingzoo.classic import chess_v6
from pettingzoo.classic.chess import chess_utils

from envport.report.grids import grid_view
from envport.spec import load_spec
from envport.targets.turns import turn_record
from envport.verifiers.reporting.compare import Steps, divergent_steps
from envport.verifiers.reporting.states import field_diffs

from helpers import ROOT

SPEC = load_spec(ROOT / "examples" / "chess")


def _after(*moves: str) -> tuple[object, np.ndarray]:
    """The reference after `moves`, and the turn record of the player to move."""
    env = chess_v6.env()
    env.reset(seed=0)
    for uci in moves:
        board = env.unwrapped.board
        move = chess.Move.from_uci(uci)
        seen = chess_utils.mirror_move(move) if board.turn == chess.BLACK else move
        chess_utils.legal_moves(board)  # fills PettingZoo's move table for this position
        env.step(chess_utils.moves_to_actions[seen.uci()])
    agent = env.agent_selection
    view = env.observe(agent)
    player = env.possible_agents.index(agent)
    return env, turn_record(view["observation"], player, view["action_mask"])


def _step_diffs(want: np.ndarray, got: np.ndarray) -> list:
    expected = Steps(want[None], np.zeros((1, 2)), np.zeros(1, bool), np.zeros(1, bool))
    actual = Steps(got[None], np.zeros((1, 2)), np.zeros(1, bool), np.zeros(1, bool))
    ((_, diffs),) = divergent_steps(SPEC, expected, actual, False, np.array([0]))
    return diffs


def test_a_mask_entry_is_named_by_the_move_of_the_player_to_move() -> None:
    _, record = _after("e2e4")  # black to move: its e7e5 is PettingZoo's mirrored e2e4
    action = chess_utils.moves_to_actions["e2e4"]
    mask_at = record.size - SPEC.game.actions + action
    got = record.copy()
    got[mask_at] = 0
    (diff,) = _step_diffs(record, got)
    assert diff.field == f"legal_action_mask[{action} e7e5]"
    assert (diff.expected, diff.actual) == (1, 0)


def test_a_mask_entry_of_white_reads_in_white_squares() -> None:
    _, record = _after()
    action = chess_utils.moves_to_actions["g1f3"]
    got = record.copy()
    got[record.size - SPEC.game.actions + action] = 0
    (diff,) = _step_diffs(record, got)
    assert diff.field == f"legal_action_mask[{action} g1f3]"


def test_an_observation_plane_is_named_by_square_and_plane() -> None:
    _, record = _after("e2e4")
    got = record.copy()
    planes = np.asarray(got[: 8 * 8 * 111]).reshape(8, 8, 111)
    # Black's view: its own pawns (plane 7: t0's "our" pawns) on its second row.
    row, file = np.argwhere(planes[:, :, 7])[0]
    planes[row, file, 7] = 0
    got[: 8 * 8 * 111] = planes.reshape(-1)
    diffs = _step_diffs(record, got)
    assert [(d.field, d.expected, d.actual) for d in diffs] == [
        (f"obs[{row}][{file}].t0.our_pawn", "set", "clear")
    ]
    assert diffs[0].picture is not None and diffs[0].picture.planes


def test_a_square_of_the_board_is_named_by_rank_and_file_with_its_piece() -> None:
    board = np.zeros(64, np.int64)
    board[chess.E4] = 7  # a black pawn on e4
    board[chess.E1], board[chess.E8] = 6, 12
    moved = board.copy()
    moved[chess.E4] = 0
    diffs = field_diffs(SPEC, {"board": board}, {"board": moved})
    assert [(d.field, d.expected, d.actual) for d in diffs] == [
        ("board[3][4]", "black_pawn", "empty")
    ]
    picture = diffs[0].picture
    assert picture is not None and picture.channels == ["piece"]
    view = grid_view(picture)
    assert view is not None and view.differing == 1
    assert view.reference[3][4].label == "p" and view.port[3][4].label == "."
    assert view.reference[0][4].label == "K" and view.port[7][4].label == "k"


def test_a_grid_without_codes_is_drawn_by_its_enum_names() -> None:
    grids = {"board": SPEC.state.grids["board"].model_copy(update={"channels": [], "codes": {}})}
    spec = SPEC.model_copy(update={"state": SPEC.state.model_copy(update={"grids": grids})})
    board = np.zeros(64, np.int64)
    board[chess.E4] = 7
    diffs = field_diffs(spec, {"board": board}, {"board": np.zeros(64, np.int64)})
    assert [d.field for d in diffs] == ["board[3][4]"]
    picture = diffs[0].picture
    assert picture is not None and picture.codes["board"][7] == "black_pawn"
    view = grid_view(picture)
    assert view is not None and view.reference[3][4].title == "board[3][4] = board black_pawn"
