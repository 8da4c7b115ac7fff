"""pgx's Leduc hold'em (pgx 2.6, `pgx.make("leduc_holdem")`) as a two-player port: a bridge,
not a port of our own, so that envport verifies pgx against PettingZoo's (RLCard's) game.

Only the forms are translated, never a rule: pgx's three actions (call, raise, fold; a call
with nothing to call is a check) take RLCard's four (call and check both become pgx's
call), and pgx's mask is shown as RLCard's four (pgx's call legal as call when behind the
highest bet, as check when level); pgx's 34 bool observation slots (chips 0..13) are laid
into RLCard's 36 float32 ones (chips 0..14); pgx's payoffs, in chips, are divided by the big
blind (2), RLCard's unit. pgx keeps ranks only (J, Q, K as 0, 1, 2, the public card drawn
at init): a loaded state gives it the hands' ranks and the rank of the card RLCard will
deal, and the reference's leaves pgx has no place for (suits, the deck's order, who folded,
the betting round's counters) are carried beside pgx's state and read back from pgx's
chips, round and raise count. pgx's own `init` is given suits by a uniform permutation, so
its deals are distributed as a shuffled six-card deck's.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import pgx
from pgx.leduc_holdem import State as PgxState

ENV = pgx.make("leduc_holdem")
INVALID, CALL, RAISE, FOLD = -1, 0, 1, 2
# RLCard's call, raise, fold, check as pgx's actions.
TO_PGX = jnp.array([CALL, RAISE, FOLD, CALL], jnp.int32)
CODES = jnp.arange(6)
BIG_BLIND = 2.0


class Carried(NamedTuple):
    """The reference's leaves pgx has no place for."""

    hands: jax.Array  # int32[2] card codes
    deck: jax.Array  # int32[4], bottom first
    deck_length: jax.Array  # int32
    public_card: jax.Array  # int32, -1 none
    folded: jax.Array  # bool[2]
    round_start: jax.Array  # int32[2]: each player's chips when the betting round began


class Bridged(NamedTuple):
    game: PgxState
    carried: Carried
    current_player: jax.Array
    observation: jax.Array
    legal_action_mask: jax.Array
    rewards: jax.Array
    terminated: jax.Array
    truncated: jax.Array


def _observation(game: PgxState) -> jax.Array:
    """pgx's 34 slots (0-5 cards, 6-19 own chips 0..13, 20-33 the opponent's) at RLCard's
    places (own chips 6-20, the opponent's 21-35), as float32."""
    seen = game.observation.astype(jnp.float32)
    return jnp.concatenate([seen[:20], jnp.zeros(1), seen[20:], jnp.zeros(1)]).astype(jnp.float32)


def _mask(game: PgxState) -> jax.Array:
    """pgx's call as RLCard's call when behind the highest bet, else as its check."""
    chips = game._chips
    behind = chips[game.current_player] < jnp.max(chips)
    legal = game.legal_action_mask
    return jnp.stack([legal[CALL] & behind, legal[RAISE], legal[FOLD], legal[CALL] & ~behind])


def _view(game: PgxState, carried: Carried) -> Bridged:
    return Bridged(
        game,
        carried,
        game.current_player,
        _observation(game),
        _mask(game),
        (game.rewards / BIG_BLIND).astype(jnp.float32),
        game.terminated,
        game.truncated,
    )


def init(key: jax.Array) -> Bridged:
    play, suits = jax.random.split(key)
    game = ENV.init(play)
    # Suits for pgx's ranks: the first codes of each rank in a uniform permutation.
    order = jax.random.permutation(suits, 6).astype(jnp.int32)
    taken = jnp.zeros(6, bool)
    picked = []
    for rank in game._cards:
        position = jnp.argmax((order // 2 == rank) & ~taken[order])
        picked.append(order[position])
        taken = taken.at[order[position]].set(True)
    rest = order[jnp.argsort(taken[order], stable=True)][:3]
    carried = Carried(
        hands=jnp.stack(picked[:2]),
        deck=jnp.concatenate([rest, jnp.stack(picked[2:])]),
        deck_length=jnp.int32(4),
        public_card=jnp.int32(-1),
        folded=jnp.zeros(2, bool),
        round_start=game._chips,
    )
    return _view(game, carried)


def step(state: Bridged, action: jax.Array, key: jax.Array) -> Bridged:
    game = state.game
    pgx_action = TO_PGX[action]
    after = ENV.step(game, pgx_action, key)
    c = state.carried
    played = ~(game.terminated | game.truncated) & game.legal_action_mask[pgx_action]
    folded = c.folded | ((jnp.arange(2) == game.current_player) & (pgx_action == FOLD) & played)
    dealt = played & (after._round > game._round) & (game._round == 0)
    top = jnp.sum(jnp.where(jnp.arange(4) == c.deck_length - 1, c.deck, 0))
    carried = Carried(
        hands=c.hands,
        deck=c.deck,
        deck_length=c.deck_length - dealt,
        public_card=jnp.where(dealt, top, c.public_card),
        folded=folded,
        round_start=jnp.where(after._round > game._round, after._chips, c.round_start),
    )
    return _view(after, carried)


def state_from_reference(ref: dict) -> Bridged:
    """RLCard's hand as pgx's: ranks, chips, the round; the last action from the betting
    round's counters (a raise when someone is behind after an action, a call when level)."""
    hands = jnp.stack([jnp.asarray(ref[f"hand.player_{i}"], jnp.int32) for i in (0, 1)])
    deck = jnp.asarray(ref["deck"], jnp.int32).reshape(4)
    length = jnp.asarray(ref["deck.length"], jnp.int32)
    public = jnp.asarray(ref["public_card"], jnp.int32)
    coming = jnp.sum(jnp.where(jnp.arange(4) == length - 1, deck, 0))
    shown = jnp.where(public >= 0, public, coming)
    chips = jnp.stack([jnp.asarray(ref[f"chips.player_{i}"], jnp.int32) for i in (0, 1)])
    raised = jnp.asarray(ref["round.raised"], jnp.int32).reshape(2)
    acted = jnp.asarray(ref["round.not_raise_num"], jnp.int32) > 0
    last = jnp.where(acted, jnp.where(raised[0] != raised[1], RAISE, CALL), INVALID)
    raises = jnp.asarray(ref["round.have_raised"], jnp.int32)
    mover = jnp.asarray(ref["current_player"], jnp.int32)
    level = raised[0] == raised[1]
    mask = jnp.stack([jnp.bool_(True), raises < 2, ~level])
    game = ENV.init(jax.random.PRNGKey(0)).replace(
        current_player=mover,
        _first_player=mover,
        _cards=jnp.stack([hands[0] // 2, hands[1] // 2, shown // 2]),
        _last_action=last.astype(jnp.int32),
        _chips=chips,
        _round=jnp.asarray(ref["round_counter"], jnp.int32),
        _raise_count=raises,
        legal_action_mask=mask,
    )
    game = game.replace(observation=ENV.observe(game))
    folded = jnp.stack([jnp.asarray(ref[f"folded.player_{i}"], bool) for i in (0, 1)])
    carried = Carried(hands, deck, length, public, folded, chips - raised)
    return _view(game, carried)


def state_to_reference(state: Bridged) -> dict:
    game, c = state.game, state.carried
    raised = game._chips - c.round_start
    acted = game._last_action != INVALID
    out = {
        "deck": c.deck,
        "deck.length": c.deck_length,
        "public_card": c.public_card,
        "round_counter": game._round,
        "game_pointer": game.current_player,
        "round.raised": raised,
        "round.have_raised": game._raise_count,
        "round.not_raise_num": acted.astype(jnp.int32),
        "round.raise_amount": (game._round + 1) * 2,
        "current_player": state.current_player,
    }
    for i in (0, 1):
        out[f"hand.player_{i}"] = c.hands[i]
        out[f"chips.player_{i}"] = game._chips[i]
        out[f"folded.player_{i}"] = c.folded[i]
        out[f"rewards.player_{i}"] = state.rewards[i]
    return out
