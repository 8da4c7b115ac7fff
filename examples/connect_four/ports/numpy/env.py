"""Connect Four (PettingZoo 1.27 `pettingzoo.classic.connect_four_v3.env()`: the raw env under
TerminateIllegalWrapper(illegal_reward=-1)) in envport's two-player NumPy contract: pure
functions over a batch of B games, a state being a dict of arrays with a leading B axis
(no autoreset; no function modifies its inputs).

Exports:
    init(rng: np.random.Generator, num_envs: int) -> state
    step(state, actions: int[B]) -> state
    state_from_reference(ref: dict of [B, ...] arrays) -> state
    state_to_reference(state) -> dict of [B, ...] arrays
    state keys: board int8[B, 6, 7], current_player int32[B], observation int8[B, 6, 7, 2],
        legal_action_mask bool[B, 7], rewards float32[B, 2], terminated bool[B],
        truncated bool[B]

Player 0 moves first. An illegal move (a full column) ends the game terminated AND
truncated with -1 for the mover, and hands the turn to player 0 (PettingZoo's
`_deads_step_first`); a legal one drops the mover's piece, ends the game on any four of the
mover's pieces (+1 mover, -1 other) or a full board (0, 0), and always passes the turn.
`observation` and `legal_action_mask` are the player-to-move's, also at the end.
Stepping a finished game changes nothing and gives rewards 0 (pgx's convention; PettingZoo
only takes `None` from a dead agent).

Hand-written known-good port: a test subject for the verifier, not model output.
"""

import numpy as np

from .rules import COLUMNS, ROWS, drop, has_four, is_full, legal_moves, observe

FIELDS = (
    "board",
    "current_player",
    "observation",
    "legal_action_mask",
    "rewards",
    "terminated",
    "truncated",
)


def _state(boards, players, rewards, terminated, truncated) -> dict:
    return {
        "board": boards,
        "current_player": players,
        "observation": observe(boards, players),
        "legal_action_mask": legal_moves(boards),
        "rewards": rewards,
        "terminated": terminated,
        "truncated": truncated,
    }


def _begin(boards: np.ndarray, players: np.ndarray) -> dict:
    size = len(boards)
    unfinished = np.zeros(size, dtype=bool)
    return _state(boards, players, np.zeros((size, 2), np.float32), unfinished, unfinished.copy())


def init(rng: np.random.Generator, num_envs: int) -> dict:
    del rng  # Connect Four's start is fixed: the generator is only the contract's
    return _begin(np.zeros((num_envs, ROWS, COLUMNS), np.int8), np.zeros(num_envs, np.int32))


def step(state: dict, actions) -> dict:
    actions = np.asarray(actions).astype(np.int64)
    boards = state["board"]
    movers = state["current_player"].astype(np.int32)
    pieces = movers + 1
    size = len(boards)
    # The wrapper reads the mask it showed the mover: a column whose top cell is taken.
    legal = boards[np.arange(size), 0, actions] == 0
    played, _ = drop(boards, actions, pieces)  # a full column leaves its board as it was
    won = legal & has_four(played, pieces)
    draw = legal & ~won & is_full(played)
    mover_reward = np.where(legal, np.where(won, 1.0, 0.0), -1.0)
    other_reward = np.where(won, -1.0, 0.0)
    rewards = np.zeros((size, 2), np.float32)
    rewards[np.arange(size), movers] = mover_reward
    rewards[np.arange(size), 1 - movers] = other_reward
    # After an illegal move PettingZoo selects the first dead agent: player_0.
    following = np.where(legal, 1 - movers, 0).astype(np.int32)
    after = _state(played, following, rewards, won | draw | ~legal, ~legal)
    # A finished game stays as it was, with rewards 0.
    finished = state["terminated"] | state["truncated"]
    kept = {**state, "rewards": np.zeros((size, 2), np.float32)}
    return {
        name: np.where(finished.reshape((-1,) + (1,) * (after[name].ndim - 1)), kept[name], value)
        for name, value in after.items()
    }


def state_from_reference(ref: dict) -> dict:
    """Games in progress from the reference's leaves: column c's pieces bottom-up in
    `board.c{c}` [B, 6] (items past `board.c{c}.length` are padding), `current_player` [B].
    Rewards 0, not finished: the leaves carry no result, as the reference's loaded env has
    none."""
    heights = np.arange(ROWS)[None, :]
    columns = [
        np.where(
            heights < np.asarray(ref[f"board.c{c}.length"])[:, None],
            np.asarray(ref[f"board.c{c}"]),
            0,
        )
        for c in range(COLUMNS)
    ]
    boards = np.stack(columns, axis=2)[:, ::-1].astype(np.int8)  # height 0 is row 5
    return _begin(np.ascontiguousarray(boards), np.asarray(ref["current_player"], np.int32))


def state_to_reference(state: dict) -> dict:
    bottom_up = state["board"][:, ::-1].astype(np.int64)
    ref = {}
    for c in range(COLUMNS):
        # No gaps in a column: its empty cells are above its pieces, so they are the zero
        # padding past its length.
        ref[f"board.c{c}"] = np.ascontiguousarray(bottom_up[:, :, c])
        ref[f"board.c{c}.length"] = (bottom_up[:, :, c] != 0).sum(axis=1)
    ref["current_player"] = state["current_player"].astype(np.int64)
    return ref
