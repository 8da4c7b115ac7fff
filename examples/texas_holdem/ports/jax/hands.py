"""Texas hold'em's showdown for one game (vmap for a batch): the best five of each player's
seven cards, as RLCard 1.2's `Hand.evaluateHand` and `compare_hands`
(rlcard.games.limitholdem.utils) rank them, in pure JAX, int32 throughout (a score stays
below 13**6).

A card is a code 0..51 in RLCard's deck order (13 * suit + rank, suits S H D C, ranks
A 2 .. K). Here a card's strength is 0 for a 2 .. 12 for an ace; a hand's score is its
category (1 high card, 2 one pair, 3 two pair, 4 three of a kind, 5 straight, 6 flush,
7 full house, 8 four of a kind, 9 straight flush, checked in RLCard's order from 9 down)
then the strengths RLCard compares within the category, most significant first:
    9, 5  the straight's highest card (5 for the wheel A-2-3-4-5: the ace plays low)
    8     the four's strength, then the highest other card (the kicker)
    7     the highest three's, then the highest other rank held twice or more (a second
          three of a kind counts as the pair)
    6     the flush suit's five highest (of five, six or seven cards of that suit)
    4     the three's, then the two highest other cards
    3     the highest pair's, the second's, then the highest other card (a third pair's
          rank when it is above every single card)
    2     the pair's, then the three highest other cards
    1     the five highest cards
Equal scores split the pot.

Hand-written known-good port: a test subject for the verifier, not model output.
"""

import jax
import jax.numpy as jnp

STRENGTHS = 13
ACE = 12
LEVELS = jnp.arange(STRENGTHS)
# A score is the category then five strengths in base 13: a plain integer comparison.
PLACE = jnp.asarray([STRENGTHS**i for i in range(4, -1, -1)], jnp.int32)


def strength(cards: jax.Array) -> jax.Array:
    """0 for a 2 .. 11 for a king, 12 for an ace (RLCard's rank order 23456789TJQKA)."""
    rank = cards % 13
    return jnp.where(rank == 0, ACE, rank - 1)


def _highest(held: jax.Array, count: int) -> jax.Array:
    """int32[count]: the `count` highest strengths held (bool[13]), highest first (an ace
    where fewer are held: such keys belong to categories the hand is not)."""
    down = held[::-1]
    seen = jnp.cumsum(down)
    return jnp.stack([ACE - jnp.argmax(down & (seen == k + 1)) for k in range(count)])


def straight_top(mask: jax.Array) -> jax.Array:
    """The highest card of the best straight in a 13-bit strength mask, -1 for none. The ace
    also plays below the 2 (bit 0 of the widened mask), so the wheel's highest card is the
    5 (strength 3)."""
    wide = (mask << 1) | ((mask >> ACE) & 1)
    top = jnp.int32(-1)
    for high in range(4, STRENGTHS + 1):  # lowest first: a higher straight overrides
        five = ((wide >> (high - 4)) & 0b11111) == 0b11111
        top = jnp.where(five, high - 1, top)
    return top


def _key(category: int, strengths: list) -> jax.Array:
    padded = jnp.zeros(5, jnp.int32).at[: len(strengths)].set(jnp.stack(strengths))
    return category * STRENGTHS**5 + jnp.sum(padded * PLACE)


def score(cards: jax.Array) -> jax.Array:
    """int32: the score of seven cards (int32[7]); higher wins."""
    power = strength(cards)
    suits = cards // 13
    counts = jnp.sum(power[:, None] == LEVELS, axis=0)
    suited = jnp.sum(suits[:, None] == jnp.arange(4), axis=0)
    flush_suit = jnp.argmax(suited)
    flush = suited[flush_suit] >= 5
    held = jnp.sum(jnp.where(counts > 0, 1 << LEVELS, 0))
    # One suit's cards have distinct strengths: their bits' sum is their union.
    flush_mask = jnp.sum(jnp.where(suits == flush_suit, 1 << power, 0))
    straight_flush = jnp.where(flush, straight_top(flush_mask), -1)
    straight = straight_top(held)

    fours, threes, pairs_held = counts == 4, counts == 3, counts == 2
    singles = counts == 1
    quads = _highest(fours, 1)[0]
    trips = _highest(threes, 1)[0]
    pairs = _highest(pairs_held, 2)
    kicker = _highest((counts > 0) & (quads != LEVELS), 1)[0]
    house_pair = _highest((counts >= 2) & (trips != LEVELS), 1)[0]
    beside_pairs = _highest((counts > 0) & (pairs[0] != LEVELS) & (pairs[1] != LEVELS), 1)[0]
    flush_five = _highest(((flush_mask >> LEVELS) & 1) > 0, 5)
    high_five = _highest(counts > 0, 5)

    categories = [  # RLCard's order: the first that holds decides
        (straight_flush >= 0, _key(9, [straight_flush])),
        (fours.any(), _key(8, [quads, kicker])),
        (threes.any() & (jnp.sum(counts >= 2) >= 2), _key(7, [trips, house_pair])),
        (flush, _key(6, list(flush_five))),
        (straight >= 0, _key(5, [straight])),
        (threes.any(), _key(4, [trips, *_highest(singles, 2)])),
        (jnp.sum(pairs_held) >= 2, _key(3, [pairs[0], pairs[1], beside_pairs])),
        (pairs_held.any(), _key(2, [pairs[0], *_highest(singles, 3)])),
    ]
    value = _key(1, list(high_five))
    for present, key in reversed(categories):
        value = jnp.where(present, key, value)
    return value.astype(jnp.int32)
