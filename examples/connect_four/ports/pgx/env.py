"""pgx's Connect Four (pgx 2.6, `pgx.make("connect_four")`) as a two-player port: a bridge,
not a port of our own, so that envport verifies pgx against PettingZoo's game.

pgx names players by an id its `init` key assigns to a colour (who moves first is player 0
or 1 at random, `current_player = bernoulli(key)`), where PettingZoo's `player_0` always
moves first: the bridge reports the colour to move as `current_player` and the rewards in
colour order, so a seat is compared as the game's first or second mover, never by pgx's
label. Everything else is pgx's own: its `init`, `step` (with its illegal-move rule and its
all-True mask at the end) and `observe`.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import pgx
from pgx._src.games.connect_four import GameState

ENV = pgx.make("connect_four")


class Bridged(NamedTuple):
    game: pgx.State
    current_player: jax.Array
    observation: jax.Array
    legal_action_mask: jax.Array
    rewards: jax.Array
    terminated: jax.Array
    truncated: jax.Array


def _view(state: pgx.State) -> Bridged:
    colour = state._x.color
    # pgx's player id of each colour: the mover's id has the colour to move.
    ids = jnp.where(jnp.arange(2) == colour, state.current_player, 1 - state.current_player)
    return Bridged(
        state,
        colour,
        state.observation,
        state.legal_action_mask,
        state.rewards[ids],
        state.terminated,
        state.truncated,
    )


def init(key: jax.Array) -> Bridged:
    return _view(ENV.init(key))


def step(state: Bridged, action: jax.Array, key: jax.Array) -> Bridged:
    return _view(ENV.step(state.game, action, key))


def state_from_reference(ref: dict) -> Bridged:
    """PettingZoo's columns (bottom up, 1 and 2) as pgx's board (row 0 on top, -1 empty,
    the colour 0 or 1), the player to move as colour and as pgx's id alike."""
    board = -jnp.ones((6, 7), jnp.int32)
    for column in range(7):
        items = jnp.asarray(ref[f"board.c{column}"], jnp.int32)
        length = jnp.asarray(ref[f"board.c{column}.length"], jnp.int32)
        for height in range(6):
            piece = jnp.where(height < length, items[height] - 1, -1)
            board = board.at[5 - height, column].set(piece)
    mover = jnp.asarray(ref["current_player"], jnp.int32)
    game = GameState(color=mover, board=board.reshape(-1), winner=jnp.int32(-1))
    state = ENV.init(jax.random.PRNGKey(0)).replace(current_player=mover, _x=game)
    state = state.replace(
        observation=ENV.observe(state),
        legal_action_mask=ENV._game.legal_action_mask(game),
    )
    return _view(state)


def state_to_reference(state: Bridged) -> dict:
    board = state.game._x.board.reshape(6, 7)
    out = {"current_player": state.current_player}
    for column in range(7):
        bottom_up = board[::-1, column]
        out[f"board.c{column}"] = jnp.where(bottom_up >= 0, bottom_up + 1, 0)
        out[f"board.c{column}.length"] = (bottom_up >= 0).sum()
    return out
