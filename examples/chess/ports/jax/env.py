"""Chess (PettingZoo 1.27 `pettingzoo.classic.chess_v6.env()`: the raw env under
TerminateIllegalWrapper(illegal_reward=-1), python-chess 1.11 underneath) in envport's
two-player JAX contract, pgx-style (one game per call, vmap for a batch; no autoreset).

Exports:
    State: NamedTuple(board int8[64], current_player int32, castling bool[4],
        ep_square int32, halfmove_clock int32, board_history bool[8, 8, 104],
        positions uint32[100, 9], positions_length int32, position_counts int32[100],
        legal_ep bool, observation bool[8, 8, 111], legal_action_mask bool[4672],
        rewards float32[2], terminated bool, truncated bool)
    init(key) -> State
    step(state: State, action: int32, key) -> State
    state_from_reference(ref: dict of arrays) -> State
    state_to_reference(state: State) -> dict of arrays

Player 0 is white and moves first. A legal action is played (a 7th-rank pawn move without
underpromotion makes a queen); the game then ends on no legal reply (checkmate: +1 the mover,
-1 the other; stalemate 0/0), insufficient material or a claimable draw (fifty moves,
threefold repetition), and the turn passes in any case. An illegal action ends the game
terminated AND truncated with -1 for the mover, the board unchanged, and the turn handed to
player 0 (PettingZoo's `_deads_step_first`), who is then shown the unchanged board's mask.
Stepping a finished game changes nothing and gives rewards 0 (pgx's convention).

Hand-written known-good port, not model output.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from . import positions as rep
from .rules import (
    ACTIONS,
    KING,
    PAWN,
    QUEEN,
    ROOK,
    Moves,
    aux_planes,
    decode,
    history_planes,
    insufficient_material,
    legal_moves,
)

SQUARE = jnp.arange(64, dtype=jnp.int32)
CORNERS = jnp.asarray([7, 0, 63, 56], jnp.int32)  # rook homes: white O-O, O-O-O, black ...
RIGHT_SIDE = jnp.asarray([0, 0, 1, 1], jnp.int32)
START = np.zeros(64, dtype=np.int8)
START[:8] = [4, 2, 3, 5, 6, 3, 2, 4]
START[8:16] = 1
START[48:56] = 7
START[56:] = [10, 8, 9, 11, 12, 9, 8, 10]


class State(NamedTuple):
    board: jax.Array  # int8[64], python-chess square order, codes 0..12
    current_player: jax.Array  # int32: 0 white, 1 black
    castling: jax.Array  # bool[4]: white O-O, white O-O-O, black O-O, black O-O-O
    ep_square: jax.Array  # int32: python-chess's ep_square, -1 for None
    halfmove_clock: jax.Array  # int32
    board_history: jax.Array  # bool[8, 8, 104]: PettingZoo's board_history
    positions: jax.Array  # uint32[100, 9]: packed keys of the repetition record
    positions_length: jax.Array  # int32
    position_counts: jax.Array  # int32[100]: each row's key's count among the rows
    legal_ep: jax.Array  # bool: the position has a legal en passant capture
    observation: jax.Array  # bool[8, 8, 111]: the player-to-move's view
    legal_action_mask: jax.Array  # bool[4672]
    rewards: jax.Array  # float32[2]
    terminated: jax.Array  # bool
    truncated: jax.Array  # bool


def observe(castling, halfmove_clock, history, player) -> jax.Array:
    """PettingZoo's observe(player): aux planes then the history; player_1's view flipped
    vertically with each history board's own and opponent planes swapped."""
    white = jnp.concatenate([aux_planes(castling, halfmove_clock, player), history], axis=-1)
    boards = history.reshape(8, 8, 8, 13)
    swapped = jnp.concatenate([boards[..., 6:12], boards[..., 0:6], boards[..., 12:]], axis=-1)
    black = jnp.concatenate(
        [aux_planes(castling, halfmove_clock, player), swapped.reshape(8, 8, 104)], axis=-1
    )[::-1]
    return jnp.where(jnp.asarray(player) == 1, black, white)


def _position(board, player, castling, ep, halfmove, history, keys, length, counts, rewards):
    """A state at a position, the game not (yet) over: the mover's moves and view."""
    moves = legal_moves(board, player, castling, ep)
    return State(
        board=board,
        current_player=jnp.asarray(player, jnp.int32),
        castling=castling,
        ep_square=jnp.asarray(ep, jnp.int32),
        halfmove_clock=jnp.asarray(halfmove, jnp.int32),
        board_history=history,
        positions=keys,
        positions_length=jnp.asarray(length, jnp.int32),
        position_counts=counts,
        legal_ep=moves.legal_ep,
        observation=observe(castling, halfmove, history, player),
        legal_action_mask=moves.mask,
        rewards=rewards,
        terminated=jnp.bool_(False),
        truncated=jnp.bool_(False),
    ), moves


def init(key: jax.Array) -> State:
    del key  # chess starts from one position
    board = jnp.asarray(START)
    history = jnp.zeros((8, 8, 104), jnp.bool_)
    keys = jnp.zeros((rep.MAX_POSITIONS, rep.KEY_WORDS), jnp.uint32)
    counts = jnp.zeros(rep.MAX_POSITIONS, jnp.int32)
    state, _ = _position(
        board, 0, jnp.ones(4, jnp.bool_), -1, 0, history, keys, 0, counts, jnp.zeros(2)
    )
    return state


def _push(state: State, action):
    """python-chess's Board.push of the decoded action: the new board, castling, ep square,
    halfmove clock, and whether the move was irreversible (zeroing, losing a castling
    right, or played where en passant was legal)."""
    mover = state.current_player
    board = state.board
    frm, to, under = decode(action, mover)
    base = (6 * mover).astype(jnp.int8)
    piece = jnp.sum(jnp.where(frm == SQUARE, board, 0)).astype(jnp.int8)
    kind = piece - base
    target = jnp.sum(jnp.where(to == SQUARE, board, 0))
    last_rank = (to // 8 == 7) | (to // 8 == 0)
    placed = jnp.where(
        under > 0, under + base, jnp.where((kind == PAWN) & last_rank, QUEEN + base, piece)
    ).astype(jnp.int8)
    en_passant = (kind == PAWN) & (to == state.ep_square) & (frm % 8 != to % 8)
    taken = jnp.where(mover == 0, to - 8, to + 8)
    short = (kind == KING) & (to - frm == 2)
    long = (kind == KING) & (frm - to == 2)
    rook = (ROOK + base).astype(jnp.int8)
    board = jnp.where(frm == SQUARE, 0, board)
    board = jnp.where(to == SQUARE, placed, board)
    board = jnp.where(en_passant & (taken == SQUARE), 0, board)
    board = jnp.where((short & (frm + 3 == SQUARE)) | (long & (frm - 4 == SQUARE)), 0, board)
    board = jnp.where((short & (frm + 1 == SQUARE)) | (long & (frm - 1 == SQUARE)), rook, board)
    touched = (frm == CORNERS) | (to == CORNERS) | ((kind == KING) & (mover == RIGHT_SIDE))
    castling = state.castling & ~touched
    ep = jnp.where((kind == PAWN) & (jnp.abs(to - frm) == 16), (frm + to) // 2, -1)
    zeroing = (kind == PAWN) | (target != 0)
    halfmove = jnp.where(zeroing, 0, state.halfmove_clock + 1)
    irreversible = zeroing | jnp.any(castling != state.castling) | state.legal_ep
    return board.astype(jnp.int8), castling, ep, halfmove, irreversible


def _untried(carry) -> jax.Array:
    remaining, found, _ = carry
    return jnp.any(remaining) & ~found


def _try_one(carry):
    """Plays the first untried legal move: whether it is quiet and leaves the opponent a
    legal move. (Module-level, not a closure: eager callers reuse its compiled loop.)"""
    remaining, _, position = carry
    action = jnp.argmax(remaining)
    board, castling, ep, halfmove, _ = _push(position, action)
    replies = legal_moves(board, 1 - position.current_player, castling, ep).mask
    return remaining.at[action].set(False), (halfmove > 0) & jnp.any(replies), position


def _quiet_with_reply(position: State, moves: Moves) -> jax.Array:
    """python-chess's fifty-move claim one move early: some legal non-zeroing move after
    which the opponent has a legal move. The legal moves are tried one by one until one
    does (a while loop: under vmap it runs only as long as a game that asks needs it; a
    game at 99 halfmoves with a quiet move nearly always stops at the first)."""
    asked = moves.any_quiet & (position.halfmove_clock >= 99)
    start = (moves.mask & asked, jnp.bool_(False), position)
    return jax.lax.while_loop(_untried, _try_one, start)[1]


def _played(state: State, action) -> State:
    mover = state.current_player
    board, castling, ep, halfmove, irreversible = _push(state, action)
    # The position moved from joins the record, or the record restarts.
    left = rep.pack(state.board, state.castling, -1, mover)
    row = jnp.arange(rep.MAX_POSITIONS)
    length = state.positions_length
    same = rep.matches(state.positions, length, left)
    keys = jnp.where((row == length)[:, None], left, state.positions)
    counts = state.position_counts + same
    counts = jnp.where(row == length, 1 + jnp.sum(same, dtype=jnp.int32), counts)
    length = jnp.where(irreversible, 0, length + 1)
    counts = jnp.where(irreversible, 0, counts)
    player = 1 - mover
    moves = legal_moves(board, player, castling, ep)
    here = rep.pack(board, castling, jnp.where(moves.legal_ep, ep, -1), player)
    seen = jnp.sum(rep.matches(keys, length, here), dtype=jnp.int32)
    history = jnp.concatenate(
        [history_planes(board, ep, seen >= 1), state.board_history[:, :, :-13]], axis=-1
    )
    threefold = (seen + 1 >= 3) | rep.reaches(keys, counts, length, here, moves.mask, player)
    after = state._replace(
        board=board,
        current_player=player,
        castling=castling,
        ep_square=ep,
        halfmove_clock=halfmove,
        legal_ep=moves.legal_ep,
    )
    fifty = (halfmove >= 100) | ((halfmove >= 99) & _quiet_with_reply(after, moves))
    stuck = ~jnp.any(moves.mask)
    over = stuck | insufficient_material(board) | fifty | threefold
    mated = stuck & moves.in_check
    white_wins = jnp.where(mover == 0, 1.0, -1.0)
    rewards = jnp.where(mated, jnp.stack([white_wins, -white_wins]), 0.0).astype(jnp.float32)
    return State(
        board=board,
        current_player=player.astype(jnp.int32),
        castling=castling,
        ep_square=ep.astype(jnp.int32),
        halfmove_clock=halfmove.astype(jnp.int32),
        board_history=history,
        positions=keys,
        positions_length=length.astype(jnp.int32),
        position_counts=counts.astype(jnp.int32),
        legal_ep=moves.legal_ep,
        observation=observe(castling, halfmove, history, player),
        legal_action_mask=moves.mask,
        rewards=rewards,
        terminated=over,
        truncated=jnp.bool_(False),
    )


def step(state: State, action, key: jax.Array) -> State:
    del key  # no chance in chess
    action = jnp.clip(jnp.asarray(action, jnp.int32), 0, ACTIONS - 1)
    legal = state.legal_action_mask[action]
    finished = state.terminated | state.truncated
    played = _played(state, action)
    # Illegal: the board stays; player_0 is selected and shown the board as it is. A
    # finished game keeps its state, with rewards 0.
    keep = finished | ~legal
    kept = jax.tree_util.tree_map(lambda old, new: jnp.where(keep, old, new), state, played)
    mover = jnp.where(state.current_player == 0, 0, 1)
    penalty = jnp.where(jnp.arange(2) == mover, -1.0, 0.0).astype(jnp.float32)
    refused = ~finished & ~legal
    return kept._replace(
        current_player=jnp.where(refused, 0, kept.current_player).astype(jnp.int32),
        observation=jnp.where(
            refused,
            observe(state.castling, state.halfmove_clock, state.board_history, 0),
            kept.observation,
        ),
        rewards=jnp.where(refused, penalty, jnp.where(finished, 0.0, played.rewards)).astype(
            jnp.float32
        ),
        terminated=kept.terminated | refused,
        truncated=kept.truncated | refused,
    )


def state_from_reference(ref) -> State:
    """A game in progress from the reference's leaves (see docs: board, current_player,
    castling, ep_square, halfmove_clock, board_history, positions, positions.length).
    Rewards 0, not finished."""
    rows = jnp.asarray(ref["positions"], jnp.int32)
    length = jnp.asarray(ref["positions.length"], jnp.int32)
    keys = rep.from_rows(rows)
    valid = jnp.arange(rep.MAX_POSITIONS) < length
    keys = jnp.where(valid[:, None], keys, jnp.uint32(0))
    state, _ = _position(
        jnp.asarray(ref["board"]).astype(jnp.int8),
        jnp.asarray(ref["current_player"], jnp.int32),
        jnp.asarray(ref["castling"]).astype(jnp.bool_),
        jnp.asarray(ref["ep_square"], jnp.int32),
        jnp.asarray(ref["halfmove_clock"], jnp.int32),
        jnp.asarray(ref["board_history"]).astype(jnp.bool_),
        keys,
        length,
        rep.counts(keys, length),
        jnp.zeros(2, jnp.float32),
    )
    return state


def state_to_reference(state: State) -> dict:
    rows = jax.vmap(rep.unpack)(state.positions)
    valid = jnp.arange(rep.MAX_POSITIONS) < state.positions_length
    return {
        "board": state.board.astype(jnp.int32),
        "current_player": jnp.asarray(state.current_player, jnp.int32),
        "castling": state.castling.astype(jnp.int32),
        "ep_square": jnp.asarray(state.ep_square, jnp.int32),
        "halfmove_clock": jnp.asarray(state.halfmove_clock, jnp.int32),
        "board_history": state.board_history.astype(jnp.int32),
        "positions": jnp.where(valid[:, None], rows, 0),
        "positions.length": jnp.asarray(state.positions_length, jnp.int32),
    }
