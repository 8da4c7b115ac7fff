"""Blackjack hands in NumPy over a batch: a hand is `capacity` card values padded with 0
and a length (the structured-state contract): cards int64[B, capacity], lengths int64[B].

Hand-written known-good port: a test subject for the verifier, not model output.
"""

import numpy as np

# The most cards a dealer draws in one stick step: the noise holds this many card values.
DRAWS = 12
ACE, TEN = 1, 10


def in_use(cards, lengths):
    """The cards held, with the padding past each length read as 0."""
    cards = np.asarray(cards)
    return np.where(np.arange(cards.shape[-1]) < np.asarray(lengths)[..., None], cards, 0)


def usable_ace(cards, lengths):
    """An ace counted as 11 does not bust the hand."""
    held = in_use(cards, lengths)
    return (held == ACE).any(axis=-1) & (held.sum(axis=-1) + 10 <= 21)


def sum_hand(cards, lengths):
    return in_use(cards, lengths).sum(axis=-1) + np.where(usable_ace(cards, lengths), 10, 0)


def is_bust(cards, lengths):
    return sum_hand(cards, lengths) > 21


def score(cards, lengths):
    return np.where(is_bust(cards, lengths), 0, sum_hand(cards, lengths))


def is_natural(cards, lengths):
    """Two cards: an ace and a ten-valued card."""
    first, second = np.asarray(cards)[..., 0], np.asarray(cards)[..., 1]
    pair = ((first == ACE) & (second == TEN)) | ((first == TEN) & (second == ACE))
    return (np.asarray(lengths) == 2) & pair


def add_card(cards, lengths, new_cards, where):
    """Append each env's new card where `where` holds (in place); a full hand drops it."""
    rows = np.flatnonzero(where & (lengths < cards.shape[-1]))
    cards[rows, lengths[rows]] = np.asarray(new_cards)[rows]
    lengths[where] += 1


def dealer_play(cards, lengths, draws, where):
    """Envs in `where`: the dealer draws from `draws[:, i]` in order while under 17."""
    for i in range(DRAWS):
        wants = where & (sum_hand(cards, lengths) < 17)
        if not wants.any():
            break
        add_card(cards, lengths, draws[:, i], wants)
