"""Chess (PettingZoo 1.27 `pettingzoo.classic.chess_v6.env()`: the raw env on python-chess
1.11 under TerminateIllegalWrapper(illegal_reward=-1)) in envport's two-player NumPy
contract: pure functions over a batch of B games, a state being a dict of arrays with a
leading B axis (no autoreset; no function modifies its inputs).

Exports:
    init(rng: np.random.Generator, num_envs: int) -> state
    step(state, actions: int[B]) -> state
    state_from_reference(ref: dict of [B, ...] arrays) -> state
    state_to_reference(state) -> dict of [B, ...] arrays
    state keys: board int8[B, 64] (python-chess squares; 1..6 white pawn..king, 7..12
        black's), current_player int32[B] (0 white), castling int8[B, 4] (white kingside,
        white queenside, black kingside, black queenside), ep_square int32[B] (-1 none),
        halfmove_clock int32[B], board_history bool[B, 8, 8, 104], positions int8[B, 100,
        67] with positions_length int32[B] (positions.py), observation bool[B, 8, 8, 111],
        legal_action_mask bool[B, 4672], rewards float32[B, 2], terminated bool[B],
        truncated bool[B]

A legal move is played, then the game ends when the side to move has no legal move
(checkmate: +1 the mover, -1 the other; stalemate 0, 0), on insufficient material, or when
a draw can be claimed (fifty moves, threefold repetition), and the turn always passes. An
illegal move (mask 0) ends the game terminated AND truncated with -1 for the mover, the
board unchanged, and hands the turn to player 0 (PettingZoo's `_deads_step_first`), whose
mask is then still the mover's legal moves. Stepping a finished game changes nothing and
gives rewards 0 (pgx's convention).

Hand-written known-good port, not model output.
"""

import numpy as np

from .observe import history_board, observe
from .positions import CAPACITY, KEY, appended, key, repetition_within_reach, seen
from .rules import (
    attacked,
    insufficient_material,
    king_square,
    legal_action_mask,
    legal_en_passant,
    mirror,
    play,
)

START = np.array(
    [4, 2, 3, 5, 6, 3, 2, 4] + [1] * 8 + [0] * 32 + [7] * 8 + [10, 8, 9, 11, 12, 9, 8, 10],
    dtype=np.int8,
)
OTHER_SIDE = [2, 3, 0, 1]
# The fields a move changes besides the view, the mask and the result.
GAME_FIELDS = (
    "board",
    "castling",
    "ep_square",
    "halfmove_clock",
    "board_history",
    "positions",
    "positions_length",
)  # castling rights seen from the other side


def _frame(boards, castling, ep, players):
    """The position in the mover's frame (rules.py): black's mirrored."""
    black = np.asarray(players) == 1
    boards = np.where(black[:, None], mirror(boards), boards)
    castling = np.where(black[:, None], np.asarray(castling)[:, OTHER_SIDE], castling)
    ep = np.asarray(ep, dtype=np.int64)
    return boards, castling, np.where(black & (ep >= 0), ep ^ 56, ep)


def _state(**fields) -> dict:
    fields["observation"] = observe(
        fields["current_player"],
        fields["castling"],
        fields["halfmove_clock"],
        fields["board_history"],
    )
    return fields


def _fifty_within_reach(boards, castling, ep, mask, asked) -> np.ndarray:
    """python-chess's claim at 99 halfmoves: some legal non-zeroing move after which the
    opponent has a legal move (the clock then at 100). In the mover's frame; only for the
    games `asked`, each of their candidate moves one row of a batch of its own."""
    found = np.zeros(len(boards), dtype=bool)
    asked = np.flatnonzero(asked)
    if len(asked) == 0:
        return found
    rows, actions = np.nonzero(np.asarray(mask)[asked])
    games = asked[rows]
    played = play(boards[games], castling[games], ep[games], actions)
    after_ep = np.where(played.ep >= 0, played.ep ^ 56, -1)
    replies = legal_action_mask(
        mirror(played.boards), played.castling[:, OTHER_SIDE], after_ep
    ).any(axis=1)
    np.logical_or.at(found, games, ~played.zeroing & replies)
    return found


def _examine(boards, castling, ep, players, halfmove, positions, length) -> dict:
    """Everything PettingZoo's step reads off the position after a move: the legal mask,
    whether it is check, and the draw claims."""
    rel_boards, rel_castling, rel_ep = _frame(boards, castling, ep, players)
    mask = legal_action_mask(rel_boards, rel_castling, rel_ep)
    movable = mask.any(axis=1)
    ep_legal = legal_en_passant(rel_boards, rel_ep, mask)
    now = key(boards, castling, np.where(ep_legal, ep, -1), players)
    count = seen(positions, length, now)
    threefold = (count >= 2) | repetition_within_reach(
        positions, length, boards, castling, players, mask
    )
    halfmove = np.asarray(halfmove)
    fifty = movable & (halfmove >= 100)
    fifty |= _fifty_within_reach(rel_boards, rel_castling, rel_ep, mask, (halfmove >= 99) & ~fifty)
    return {
        "mask": mask,
        "movable": movable,
        "check": attacked(rel_boards, king_square(rel_boards)),
        "repeated": count >= 1,
        "draw_claim": threefold | fifty,
    }


def init(rng: np.random.Generator, num_envs: int) -> dict:
    del rng  # chess starts from one position: the generator is only the contract's
    return _begin(
        {
            "board": np.tile(START, (num_envs, 1)),
            "current_player": np.zeros(num_envs, np.int32),
            "castling": np.ones((num_envs, 4), np.int8),
            "ep_square": np.full(num_envs, -1, np.int32),
            "halfmove_clock": np.zeros(num_envs, np.int32),
            "board_history": np.zeros((num_envs, 8, 8, 104), bool),
            "positions": np.zeros((num_envs, CAPACITY, KEY), np.int8),
            "positions_length": np.zeros(num_envs, np.int32),
        }
    )


def _begin(game: dict) -> dict:
    size = len(game["board"])
    rel = _frame(game["board"], game["castling"], game["ep_square"], game["current_player"])
    unfinished = np.zeros(size, dtype=bool)
    return _state(
        **game,
        legal_action_mask=legal_action_mask(*rel),
        rewards=np.zeros((size, 2), np.float32),
        terminated=unfinished,
        truncated=unfinished.copy(),
    )


def step(state: dict, actions) -> dict:
    size = len(state["board"])
    rows = np.arange(size)
    actions = np.asarray(actions, dtype=np.int64)
    movers = state["current_player"].astype(np.int32)
    black = movers == 1
    legal = state["legal_action_mask"][rows, actions]
    boards, castling, ep = _frame(state["board"], state["castling"], state["ep_square"], movers)
    # The key of the position moved from, and whether the move is irreversible there
    # (python-chess's is_irreversible: a legal en passant capture makes any move so).
    ep_before = legal_en_passant(boards, ep, state["legal_action_mask"])
    before = key(
        state["board"], state["castling"], np.where(ep_before, state["ep_square"], -1), movers
    )
    played = play(boards, castling, ep, actions)
    irreversible = played.zeroing | played.reduces_castling | ep_before
    positions, length = appended(
        state["positions"], state["positions_length"], before, ~irreversible
    )
    board = np.where(black[:, None], mirror(played.boards), played.boards)
    new_castling = np.where(black[:, None], played.castling[:, OTHER_SIDE], played.castling)
    new_ep = np.where(black & (played.ep >= 0), played.ep ^ 56, played.ep).astype(np.int32)
    halfmove = np.where(played.zeroing, 0, state["halfmove_clock"] + 1).astype(np.int32)
    following = (1 - movers).astype(np.int32)
    seen_now = _examine(board, new_castling, new_ep, following, halfmove, positions, length)
    ended = ~seen_now["movable"] | insufficient_material(board) | seen_now["draw_claim"]
    mate = ~seen_now["movable"] & seen_now["check"]
    rewards = np.zeros((size, 2), np.float32)
    rewards[rows, movers] = np.where(mate, 1.0, 0.0)
    rewards[rows, following] = np.where(mate, -1.0, 0.0)
    history = np.concatenate(
        [history_board(board, new_ep, seen_now["repeated"]), state["board_history"][..., :-13]],
        axis=3,
    )
    moved = {
        "board": board,
        "current_player": following,
        "castling": new_castling,
        "ep_square": new_ep,
        "halfmove_clock": halfmove,
        "board_history": history,
        "positions": positions,
        "positions_length": length.astype(np.int32),
        "legal_action_mask": seen_now["mask"],
        "rewards": rewards,
        "terminated": ended,
        "truncated": np.zeros(size, dtype=bool),
    }
    # An illegal move: the position (and the mover's mask) stays, the mover loses, and
    # player_0 is selected.
    refused = np.flatnonzero(~legal)
    for name in (*GAME_FIELDS, "legal_action_mask"):
        moved[name][refused] = state[name][refused]
    moved["current_player"][refused] = 0
    moved["rewards"][refused] = 0.0
    moved["rewards"][refused, movers[refused]] = -1.0
    moved["terminated"][refused] = True
    moved["truncated"][refused] = True
    after = _state(**moved)
    # A finished game stays as it was, with rewards 0.
    finished = np.flatnonzero(state["terminated"] | state["truncated"])
    for name in after:
        after[name][finished] = state[name][finished]
    after["rewards"][finished] = 0.0
    return after


def state_from_reference(ref: dict) -> dict:
    """Games in progress from the reference's leaves (the brief's flat dict); rows of
    `positions` past `positions.length` are padding. Rewards 0, not finished: the leaves
    carry no result."""
    return _begin(
        {
            "board": np.asarray(ref["board"]).astype(np.int8),
            "current_player": np.asarray(ref["current_player"]).astype(np.int32),
            "castling": np.asarray(ref["castling"]).astype(np.int8),
            "ep_square": np.asarray(ref["ep_square"]).astype(np.int32),
            "halfmove_clock": np.asarray(ref["halfmove_clock"]).astype(np.int32),
            "board_history": np.asarray(ref["board_history"]).astype(bool),
            "positions": np.asarray(ref["positions"]).astype(np.int8),
            "positions_length": np.asarray(ref["positions.length"]).astype(np.int32),
        }
    )


def state_to_reference(state: dict) -> dict:
    length = state["positions_length"]
    valid = np.arange(CAPACITY)[None, :, None] < length[:, None, None]
    return {
        "board": state["board"].astype(np.int64),
        "current_player": state["current_player"].astype(np.int64),
        "castling": state["castling"].astype(np.int64),
        "ep_square": state["ep_square"].astype(np.int64),
        "halfmove_clock": state["halfmove_clock"].astype(np.int64),
        "board_history": state["board_history"].astype(np.int64),
        "positions": np.where(valid, state["positions"], 0).astype(np.int64),
        "positions.length": length.astype(np.int64),
    }
