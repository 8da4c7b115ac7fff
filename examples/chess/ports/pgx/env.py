"""pgx's chess (pgx 2.6, `pgx.make("chess")`) as a two-player port: a bridge, not a port of
our own, so that envport verifies pgx against PettingZoo's chess_v6.

Exports (the chess spec's `[targets.jax]` env contract):
    State: NamedTuple(game: pgx's State, positions int32[100, 67], positions_length int32,
        current_player int32, observation bool[8, 8, 111], legal_action_mask bool[4672],
        rewards float32[2], terminated bool, truncated bool)
    init(key) -> State;  step(state, action int32, key) -> State
    state_from_reference(ref) -> State;  state_to_reference(state) -> ref

What is relabelled, and only that: pgx names players by an id its `init` key assigns to a
colour; the bridge reports the colour to move as `current_player` (0 white) and the rewards
in colour order. Actions are one permutation of the 4672 ids (actions.py: same source
square, planes reordered). The observation is pgx's own planes in PettingZoo's layout
(views.py). pgx keeps its board in the mover's frame (ranks flipped for black, pieces signed
by owner, index file * 8 + rank); the reads and loads turn it into python-chess's squares.
Everything pgx plays is pgx's own: its `step` (the illegal move played anyway, -1/+1,
terminated only), its endings (no legal move, halfmove clock at 100, OpenSpiel's
insufficient material, a position's third occurrence by its Zobrist hash, 512 plies), its
all-True mask once the game is over, its observation.

What cannot be mapped, and how the bridge stands in:
- `positions` (the reference's repetition record): pgx keeps only Zobrist hashes. The
  bridge records pgx's own positions as python-chess would (the position moved from
  appended after a reversible move, the record emptied after a pawn move, a capture, lost
  castling rights, or where pgx's mask had an en passant capture), for state reads only;
  pgx's play never sees it. A load hashes each row with pgx's own `_zobrist_hash`; pgx's
  `init` instead stores `INIT_ZOBRIST_HASH`, which under jax 0.10 is not the hash its tables
  give the start position, so a loaded start position counts as seen where pgx's own does not.
- The ply count (pgx's `step_count`, its 512-ply cap and ply plane) is not in the
  reference's state: a loaded game counts from 0, so the cap shows only in games played
  from the start. `fullmove_count` (not used by pgx's rules) starts at 1.
- pgx hashes a position with its en passant square whenever a pawn just double-pushed; the
  reference's rows carry it only when the capture is legal, so a loaded row is hashed
  without it. Hashes of positions before the last irreversible move are not in the
  reference's state: loaded as empty (0), so pgx's repetition flags on older history boards
  read them as unrepeated.
- pgx's observation is float32 with a ply-count plane and "seen no other time" planes, none
  of which PettingZoo has (dropped by views.py).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pgx
from pgx._src.games.chess import (
    MAX_TERMINATION_STEPS,
    TO_PLANE,
    GameState,
    _legal_action_mask,
    _zobrist_hash,
)

from .actions import PGX_OF_PETTINGZOO as _PGX_OF_PETTINGZOO
from .views import pettingzoo_view

ENV = pgx.make("chess")
ACTIONS = 64 * 73
CAPACITY = 100
KEY_LENGTH = 67
PAWN = 1
CASTLE_BITS = jnp.asarray([1, 2, 4, 8], jnp.int32)
# The reference's castling (white O-O, O-O-O, black O-O, O-O-O) as indices into pgx's
# flattened `castling_rights` (mover O-O-O, O-O, opponent O-O-O, O-O), white or black to
# move; each row is its own inverse.
RIGHTS = jnp.asarray([[1, 0, 3, 2], [3, 2, 1, 0]], jnp.int32)


def _square_tables() -> tuple[np.ndarray, np.ndarray]:
    """python-chess's square of each pgx index with white or black to move, and the inverse."""
    absolute = np.zeros((2, 64), np.int32)
    for index in range(64):
        file, rank = divmod(index, 8)
        absolute[0, index] = rank * 8 + file
        absolute[1, index] = (7 - rank) * 8 + file
    return absolute, np.argsort(absolute, axis=1).astype(np.int32)


_ABSOLUTE, _FRAME = _square_tables()
ABSOLUTE, FRAME = jnp.asarray(_ABSOLUTE), jnp.asarray(_FRAME)
PGX_OF_PETTINGZOO = jnp.asarray(_PGX_OF_PETTINGZOO)


class State(NamedTuple):
    game: pgx.State
    positions: jax.Array  # int32[100, 67]: the reference's repetition record of pgx's game
    positions_length: jax.Array  # int32
    current_player: jax.Array  # int32: the colour to move, 0 white
    observation: jax.Array  # bool[8, 8, 111]: pgx's view in PettingZoo's layout
    legal_action_mask: jax.Array  # bool[4672], PettingZoo's action ids
    rewards: jax.Array  # float32[2], white's then black's
    terminated: jax.Array
    truncated: jax.Array


def _absolute_board(board: jax.Array, colour: jax.Array) -> jax.Array:
    """pgx's signed mover-frame board as python-chess's squares, codes 0..12."""
    squares = board[FRAME[colour]]
    white = (squares > 0) == (colour == 0)
    return jnp.where(squares == 0, 0, jnp.abs(squares) + jnp.where(white, 0, 6)).astype(jnp.int32)


def _frame_board(codes: jax.Array, colour: jax.Array) -> jax.Array:
    codes = jnp.asarray(codes, jnp.int32)
    kind = (codes - 1) % 6 + 1
    own = (codes <= 6) == (colour == 0)
    signed = jnp.where(codes == 0, 0, jnp.where(own, kind, -kind))
    return signed[ABSOLUTE[colour]].astype(jnp.int32)


def _absolute_square(index: jax.Array, colour: jax.Array) -> jax.Array:
    return jnp.where(index < 0, -1, ABSOLUTE[colour][jnp.clip(index, 0, 63)]).astype(jnp.int32)


def _frame_square(square: jax.Array, colour: jax.Array) -> jax.Array:
    return jnp.where(square < 0, -1, FRAME[colour][jnp.clip(square, 0, 63)]).astype(jnp.int32)


def _castling(x: GameState) -> jax.Array:
    return x.castling_rights.reshape(-1)[RIGHTS[x.color]]


def _legal_en_passant(x: GameState) -> jax.Array:
    """Whether pgx's own mask holds an en passant capture (python-chess's
    `has_legal_en_passant`, pgx's judgement): a mover's pawn beside the double-pushed one
    may take on the en passant square."""
    target = jnp.clip(x.en_passant, 0, 63)
    sources = jnp.stack([target - 9, target + 7])  # file -1 and +1, one rank behind
    beside = (sources >= 0) & (sources < 64) & (jnp.abs(sources // 8 - target // 8) == 1)
    sources = jnp.clip(sources, 0, 63)
    planes = TO_PLANE[sources, target]
    labels = sources * 73 + jnp.clip(planes, 0, 72)
    takes = beside & (planes >= 0) & (x.board[sources] == PAWN) & x.legal_action_mask[labels]
    return (x.en_passant >= 0) & jnp.any(takes)


def _reference_key(x: GameState) -> jax.Array:
    """The position's transposition key as the reference's `positions` rows hold it."""
    ep = jnp.where(_legal_en_passant(x), _absolute_square(x.en_passant, x.color), -1)
    mask = jnp.sum(jnp.where(_castling(x), CASTLE_BITS, 0))
    meta = jnp.stack([mask, ep, x.color]).astype(jnp.int32)
    return jnp.concatenate([_absolute_board(x.board, x.color), meta])


def _recorded(state: State, before: GameState, after: GameState) -> tuple[jax.Array, jax.Array]:
    """The record after pgx's move from `before` to `after` (python-chess's
    `is_irreversible`: a zeroing move, lost castling rights, a legal en passant)."""
    reversible = (
        (after.halfmove_count > 0)
        & jnp.all(_castling(before) == _castling(after))
        & ~_legal_en_passant(before)
    )
    full = state.positions_length >= CAPACITY
    rows = jnp.where(full, jnp.roll(state.positions, -1, axis=0), state.positions)
    length = jnp.minimum(state.positions_length, CAPACITY - 1)
    rows = jnp.where((jnp.arange(CAPACITY) == length)[:, None], _reference_key(before), rows)
    rows = jnp.where(reversible, rows, 0)
    length = jnp.where(reversible, length + 1, 0)
    # A finished game is not stepped by pgx: its record stays.
    finished = state.game.terminated | state.game.truncated
    return (
        jnp.where(finished, state.positions, rows).astype(jnp.int32),
        jnp.where(finished, state.positions_length, length).astype(jnp.int32),
    )


def _view(game: pgx.State, positions: jax.Array, length: jax.Array) -> State:
    colour = game._x.color
    # `_player_order[colour]` is the colour's player id: rewards are indexed by id.
    return State(
        game=game,
        positions=positions,
        positions_length=length,
        current_player=colour.astype(jnp.int32),
        observation=pettingzoo_view(game.observation),
        legal_action_mask=game.legal_action_mask[PGX_OF_PETTINGZOO],
        rewards=game.rewards[game._player_order].astype(jnp.float32),
        terminated=game.terminated,
        truncated=game.truncated,
    )


def init(key: jax.Array) -> State:
    empty = jnp.zeros((CAPACITY, KEY_LENGTH), jnp.int32)
    return _view(ENV.init(key), empty, jnp.int32(0))


def step(state: State, action: jax.Array, key: jax.Array) -> State:
    action = jnp.clip(jnp.asarray(action, jnp.int32), 0, ACTIONS - 1)
    game = ENV.step(state.game, PGX_OF_PETTINGZOO[action], key)
    positions, length = _recorded(state, state.game._x, game._x)
    return _view(game, positions, length)


def _history_boards(planes: jax.Array, colour: jax.Array) -> jax.Array:
    """PettingZoo's `board_history` (white's frame, rank 8 on top, 13 planes a board) as
    pgx's 8 boards in the mover's frame. PettingZoo shows a just double-pushed pawn on its
    own back rank (its en passant mark); no real pawn stands there, so it goes back."""
    boards = planes.reshape(8, 8, 8, 13)[..., :12].transpose(2, 0, 1, 3)  # [board, row, col, k]
    codes = jnp.sum(boards * jnp.arange(1, 13, dtype=jnp.int32), axis=-1)
    codes = codes[:, ::-1]  # rank 1 first: python-chess's square order once flattened
    white_mark = codes[:, 0] == 1
    black_mark = codes[:, 7] == 7
    codes = codes.at[:, 0].set(jnp.where(white_mark, 0, codes[:, 0]))
    codes = codes.at[:, 3].set(jnp.where(white_mark, 1, codes[:, 3]))
    codes = codes.at[:, 7].set(jnp.where(black_mark, 0, codes[:, 7]))
    codes = codes.at[:, 4].set(jnp.where(black_mark, 7, codes[:, 4]))
    return jax.vmap(_frame_board, in_axes=(0, None))(codes.reshape(8, 64), colour)


def _row_hash(row: jax.Array) -> jax.Array:
    """pgx's Zobrist hash of a reference `positions` row (its side to move's frame)."""
    side = row[66]
    bits = ((row[64] >> jnp.arange(4)) & 1).astype(jnp.bool_)
    x = GameState(
        color=side,
        board=_frame_board(row[:64], side),
        castling_rights=bits[RIGHTS[side]].reshape(2, 2),
        en_passant=_frame_square(row[65], side),
    )
    return _zobrist_hash(x)


def state_from_reference(ref: dict) -> State:
    """A game in progress at the reference's position: pgx's state in the mover's frame, its
    hash history from the current position and the `positions` rows (newest first), its
    legal moves and observation from pgx's own functions. Rewards 0, not finished."""
    colour = jnp.asarray(ref["current_player"], jnp.int32)
    rows = jnp.asarray(ref["positions"], jnp.int32)
    length = jnp.asarray(ref["positions.length"], jnp.int32)
    rows = jnp.where((jnp.arange(CAPACITY) < length)[:, None], rows, 0)
    rights = jnp.asarray(ref["castling"]).astype(jnp.bool_)
    x = GameState(
        color=colour,
        board=_frame_board(ref["board"], colour),
        castling_rights=rights[RIGHTS[colour]].reshape(2, 2),
        en_passant=_frame_square(jnp.asarray(ref["ep_square"], jnp.int32), colour),
        halfmove_count=jnp.asarray(ref["halfmove_clock"], jnp.int32),
        board_history=_history_boards(jnp.asarray(ref["board_history"], jnp.int32), colour),
    )
    earlier = jax.vmap(_row_hash)(rows)
    back = jnp.arange(MAX_TERMINATION_STEPS + 1)  # hash_history[i]: i plies ago
    older = earlier[jnp.clip(length - back, 0, CAPACITY - 1)]
    hashes = jnp.where(((back >= 1) & (back <= length))[:, None], older, jnp.uint32(0))
    hashes = hashes.at[0].set(_zobrist_hash(x))
    x = x._replace(hash_history=hashes)
    x = x._replace(legal_action_mask=_legal_action_mask(x))
    game = ENV.init(jax.random.PRNGKey(0)).replace(  # type: ignore[attr-defined]
        current_player=colour,
        _player_order=jnp.asarray([0, 1], jnp.int32),
        _x=x,
        legal_action_mask=x.legal_action_mask,
    )
    game = game.replace(observation=ENV.observe(game))
    return _view(game, rows, length)


def state_to_reference(state: State) -> dict:
    game = state.game
    x = game._x
    valid = jnp.arange(CAPACITY) < state.positions_length
    # The history as white sees it (pgx's own observe for white's id), PettingZoo's layout.
    white = pettingzoo_view(ENV._observe(game, game._player_order[0]))
    return {
        "board": _absolute_board(x.board, x.color),
        "current_player": x.color.astype(jnp.int32),
        "castling": _castling(x).astype(jnp.int32),
        "ep_square": _absolute_square(x.en_passant, x.color),
        "halfmove_clock": x.halfmove_count.astype(jnp.int32),
        "board_history": white[..., 7:].astype(jnp.int32),
        "positions": jnp.where(valid[:, None], state.positions, 0),
        "positions.length": state.positions_length,
    }
