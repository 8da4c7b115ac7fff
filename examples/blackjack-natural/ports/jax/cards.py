"""Blackjack hands in JAX: a hand is `capacity` card values padded with 0 and a length (the
structured-state contract), so every function keeps static shapes.

Hand-written known-good port: a test subject for the verifier, not model output.
"""

import jax
import jax.numpy as jnp

# The most cards a dealer draws in one stick step: the noise holds this many card values.
DRAWS = 12
ACE, TEN = 1, 10


def in_use(cards, length):
    """The cards held, with the padding past `length` read as 0."""
    return jnp.where(jnp.arange(cards.shape[-1]) < length, cards, 0)


def usable_ace(cards, length):
    """An ace counted as 11 does not bust the hand."""
    held = in_use(cards, length)
    return jnp.any(held == ACE) & (held.sum() + 10 <= 21)


def sum_hand(cards, length):
    held = in_use(cards, length)
    return held.sum() + jnp.where(usable_ace(cards, length), 10, 0)


def is_bust(cards, length):
    return sum_hand(cards, length) > 21


def score(cards, length):
    return jnp.where(is_bust(cards, length), 0, sum_hand(cards, length))


def is_natural(cards, length):
    """Two cards: an ace and a ten-valued card."""
    first, second = cards[0], cards[1]
    pair = ((first == ACE) & (second == TEN)) | ((first == TEN) & (second == ACE))
    return (length == 2) & pair


def add_card(cards, length, card):
    """The hand with `card` appended (dropped if the hand is full, as a fixed shape must)."""
    return cards.at[length].set(card, mode="drop"), length + 1


def dealer_play(cards, length, draws):
    """The dealer draws from `draws` in order while the hand is under 17."""

    def draw(i, hand):
        cards, length = hand
        wants = sum_hand(cards, length) < 17
        grown, longer = add_card(cards, length, draws[i])
        return jnp.where(wants, grown, cards), jnp.where(wants, longer, length)

    return jax.lax.fori_loop(0, DRAWS, draw, (cards, length))
