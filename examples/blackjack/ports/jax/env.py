"""Blackjack-v1 (Gymnasium's toy text) in the gymnax functional style (envport's JAX
contract), with explicit randomness: `sample_noise` draws the next DRAWS cards of the
infinite deck (as values minus one), `step_given_noise` plays the step with them.

Hand-written known-good port: a test subject for the verifier, not model output.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp

from .cards import DRAWS, add_card, dealer_play, is_bust, is_natural, score, sum_hand, usable_ace
from .settings import NATURAL, SAB

PLAYER_CAPACITY, DEALER_CAPACITY = 22, 16
# The infinite deck: ace to nine once, ten four times (ten, jack, queen, king).
DECK = jnp.array([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10], dtype=jnp.int32)


class Params(NamedTuple):
    # The reference's kwargs, set per example (the `settings` module beside this one).
    natural: bool = NATURAL
    sab: bool = SAB


class State(NamedTuple):
    player: jax.Array
    player_length: jax.Array
    dealer: jax.Array
    dealer_length: jax.Array


def default_params() -> Params:
    return Params()


def observe(state: State):
    player_sum = sum_hand(state.player, state.player_length)
    ace = usable_ace(state.player, state.player_length)
    return jnp.stack([player_sum, state.dealer[0], ace.astype(jnp.int32)]).astype(jnp.int32)


def _deal(cards):
    return (
        jnp.zeros(PLAYER_CAPACITY, jnp.int32).at[:2].set(cards[2:4]),
        jnp.zeros(DEALER_CAPACITY, jnp.int32).at[:2].set(cards[:2]),
    )


def reset(key: jax.Array, params: Params):
    cards = jax.random.choice(key, DECK, (4,))
    player, dealer = _deal(cards)
    state = State(player, jnp.int32(2), dealer, jnp.int32(2))
    return observe(state), state


def sample_noise(key: jax.Array, state: State, action, params: Params):
    """The next DRAWS cards of the deck, as card value minus one (0..9)."""
    return jax.random.choice(key, DECK, (DRAWS,)) - 1


def cmp(a, b):
    return (a > b).astype(jnp.float32) - (a < b).astype(jnp.float32)


def step_given_noise(noise, state: State, action, params: Params):
    draws = jnp.asarray(noise, jnp.int32) + 1
    # Hit: one card to the player; the hand busting ends the episode at -1.
    player, player_length = add_card(state.player, state.player_length, draws[0])
    bust = is_bust(player, player_length)
    hit_reward = jnp.where(bust, -1.0, 0.0)
    # Stick: the dealer plays out the hand, then the scores compare.
    dealer, dealer_length = dealer_play(state.dealer, state.dealer_length, draws)
    stick_reward = cmp(score(state.player, state.player_length), score(dealer, dealer_length))
    player_natural = is_natural(state.player, state.player_length)
    sab_win = params.sab & player_natural & ~is_natural(dealer, dealer_length)
    natural_win = ~params.sab & params.natural & player_natural & (stick_reward == 1.0)
    stick_reward = jnp.where(sab_win, 1.0, jnp.where(natural_win, 1.5, stick_reward))
    hit = action == 1
    state = State(
        jnp.where(hit, player, state.player),
        jnp.where(hit, player_length, state.player_length),
        jnp.where(hit, state.dealer, dealer),
        jnp.where(hit, state.dealer_length, dealer_length),
    )
    reward = jnp.where(hit, hit_reward, stick_reward).astype(jnp.float32)
    terminated = jnp.where(hit, bust, True)
    return observe(state), state, reward, terminated, jnp.bool_(False), {}


def step(key: jax.Array, state: State, action, params: Params):
    return step_given_noise(sample_noise(key, state, action, params), state, action, params)


def state_from_reference(ref_state) -> State:
    return State(
        jnp.asarray(ref_state["hand.player"], dtype=jnp.int32),
        jnp.asarray(ref_state["hand.player.length"], dtype=jnp.int32),
        jnp.asarray(ref_state["hand.dealer"], dtype=jnp.int32),
        jnp.asarray(ref_state["hand.dealer.length"], dtype=jnp.int32),
    )


def state_to_reference(state: State):
    return {
        "hand.player": state.player,
        "hand.player.length": state.player_length,
        "hand.dealer": state.dealer,
        "hand.dealer.length": state.dealer_length,
    }
