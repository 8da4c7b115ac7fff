"""Connect Four (PettingZoo 1.27 `pettingzoo.classic.connect_four_v3.env()`: the raw env under
TerminateIllegalWrapper(illegal_reward=-1)) in envport's two-player JAX contract, pgx-style
(one game per call, vmap for a batch; no autoreset).

Exports:
    State: NamedTuple(board int8[6, 7], current_player int32, observation int8[6, 7, 2],
        legal_action_mask bool[7], rewards float32[2], terminated bool, truncated bool)
    init(key) -> State
    step(state: State, action: int32, key) -> State
    state_from_reference(ref: dict of arrays) -> State
    state_to_reference(state: State) -> dict of arrays

Player 0 moves first. An illegal move (a full column) ends the game terminated AND
truncated with -1 for the mover, and hands the turn to player 0 (PettingZoo's
`_deads_step_first`); a legal one drops the mover's piece, ends the game on any four of the
mover's pieces (+1 mover, -1 other) or a full board (0, 0), and always passes the turn.
`observation` and `legal_action_mask` are the player-to-move's, also at the end.
Stepping a finished game changes nothing and gives rewards 0 (pgx's convention; PettingZoo
only takes `None` from a dead agent).

Hand-written known-good port: a test subject for the verifier, not model output.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp

from .rules import COLUMN_INDEX, COLUMNS, ROWS, drop, has_four, is_full, legal_moves, observe


class State(NamedTuple):
    board: jax.Array  # int8[6, 7], row 0 the top; 0 empty, 1 player_0's, 2 player_1's
    current_player: jax.Array  # int32: 0 or 1, the player to move
    observation: jax.Array  # int8[6, 7, 2]: the player-to-move's view
    legal_action_mask: jax.Array  # bool[7]: the columns with room
    rewards: jax.Array  # float32[2]: this step's reward, indexed by player
    terminated: jax.Array  # bool
    truncated: jax.Array  # bool: only an illegal move truncates


def _state(board, player, rewards, terminated, truncated) -> State:
    return State(
        board=board,
        current_player=player,
        observation=observe(board, player),
        legal_action_mask=legal_moves(board),
        rewards=rewards,
        terminated=terminated,
        truncated=truncated,
    )


def _begin(board: jax.Array, player: jax.Array) -> State:
    return _state(board, player, jnp.zeros(2, jnp.float32), jnp.bool_(False), jnp.bool_(False))


def init(key: jax.Array) -> State:
    del key  # Connect Four's start is fixed: the key is only the contract's
    return _begin(jnp.zeros((ROWS, COLUMNS), jnp.int8), jnp.int32(0))


def step(state: State, action, key: jax.Array) -> State:
    del key  # no chance in the game
    action = jnp.asarray(action, jnp.int32)
    mover = state.current_player
    piece = (mover + 1).astype(jnp.int8)
    # The wrapper reads the mask it showed the mover: a column whose top cell is taken.
    # A one-hot test, not state.board[0, action]: a gather under vmap (twice the time).
    legal = jnp.any((COLUMN_INDEX[0] == action) & (state.board[0] == 0))
    dropped, _ = drop(state.board, action, piece)  # a full column leaves the board as it was
    won = legal & has_four(dropped, piece)
    draw = legal & ~won & is_full(dropped)
    mover_reward = jnp.where(legal, jnp.where(won, 1.0, 0.0), -1.0)
    other_reward = jnp.where(won, -1.0, 0.0)
    by_player = jnp.where(
        mover == 0,
        jnp.stack([mover_reward, other_reward]),
        jnp.stack([other_reward, mover_reward]),
    ).astype(jnp.float32)
    # After an illegal move PettingZoo selects the first dead agent: player_0.
    following = jnp.where(legal, 1 - mover, 0).astype(jnp.int32)
    played = _state(dropped, following, by_player, won | draw | ~legal, ~legal)
    # A finished game keeps its state, with rewards 0. (A select of every field measured
    # faster than selecting board and player first and observing once.)
    finished = state.terminated | state.truncated
    still = state._replace(rewards=jnp.zeros(2, jnp.float32))
    return jax.tree_util.tree_map(lambda old, new: jnp.where(finished, old, new), still, played)


def state_from_reference(ref) -> State:
    """A game in progress from the reference's leaves: column c's pieces bottom-up in
    `board.c{c}` (items past `board.c{c}.length` are padding), `current_player`. Rewards 0,
    not finished: the leaves carry no result, as the reference's loaded env has none."""
    heights = jnp.arange(ROWS, dtype=jnp.int32)
    columns = []
    for c in range(COLUMNS):
        pieces = jnp.asarray(ref[f"board.c{c}"]).astype(jnp.int8)
        length = jnp.asarray(ref[f"board.c{c}.length"]).astype(jnp.int32)
        columns.append(jnp.where(heights < length, pieces, 0).astype(jnp.int8))
    board = jnp.stack(columns, axis=1)[::-1]  # height 0 is the bottom row, row 5
    return _begin(board, jnp.asarray(ref["current_player"]).astype(jnp.int32))


def state_to_reference(state: State) -> dict:
    bottom_up = state.board[::-1].astype(jnp.int32)
    ref = {}
    for c in range(COLUMNS):
        # No gaps in a column: its empty cells are above its pieces, so they are the
        # zero padding past its length.
        ref[f"board.c{c}"] = bottom_up[:, c]
        ref[f"board.c{c}.length"] = jnp.sum(bottom_up[:, c] != 0, dtype=jnp.int32)
    ref["current_player"] = jnp.asarray(state.current_player, jnp.int32)
    return ref
