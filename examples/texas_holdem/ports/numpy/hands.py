"""Texas hold'em's showdown over a batch of B games: the best five of each player's seven
cards, as RLCard 1.2's `Hand.evaluateHand` and `compare_hands`
(rlcard.games.limitholdem.utils) rank them, in pure NumPy.

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

import numpy as np

STRENGTHS = 13
ACE = 12
# A score is the category then five strengths in base 13: a plain integer comparison.
PLACE = STRENGTHS ** np.arange(5)[::-1]


def strength(cards: np.ndarray) -> np.ndarray:
    """0 for a 2 .. 11 for a king, 12 for an ace (RLCard's rank order 23456789TJQKA)."""
    rank = cards % 13
    return np.where(rank == 0, ACE, rank - 1)


def _bits(mask: np.ndarray) -> np.ndarray:
    """bool[B, 13]: which strengths a 13-bit mask holds."""
    return ((mask[:, None] >> np.arange(STRENGTHS)) & 1).astype(bool)


def _highest(held: np.ndarray, count: int) -> np.ndarray:
    """int[B, count]: the `count` highest strengths held (bool[B, 13]), highest first."""
    down = held[:, ::-1]
    order = np.argsort(~down, axis=1, kind="stable")[:, :count]
    return ACE - order


def straight_top(mask: np.ndarray) -> np.ndarray:
    """The highest card of the best straight in a 13-bit strength mask, -1 for none. The ace
    also plays below the 2 (bit 0 of the widened mask), so the wheel's highest card is the
    5 (strength 3)."""
    wide = (mask << 1) | ((mask >> ACE) & 1)
    top = np.full(len(mask), -1)
    for high in range(4, STRENGTHS + 1):  # lowest first: a higher straight overrides
        five = ((wide >> (high - 4)) & 0b11111) == 0b11111
        top = np.where(five, high - 1, top)
    return top


def scores(cards: np.ndarray) -> np.ndarray:
    """int64[B]: the score of each row's seven cards (int[B, 7]); higher wins."""
    size = len(cards)
    rows = np.arange(size)
    power = strength(cards)
    suits = cards // 13
    counts = np.zeros((size, STRENGTHS), dtype=np.int64)
    np.add.at(counts, (np.repeat(rows, 7), power.reshape(-1)), 1)
    suited = np.zeros((size, 4), dtype=np.int64)
    np.add.at(suited, (np.repeat(rows, 7), suits.reshape(-1)), 1)
    flush_suit = np.argmax(suited, axis=1)
    flush = suited[rows, flush_suit] >= 5
    bit = np.int64(1) << power
    held = (counts > 0) @ (np.int64(1) << np.arange(STRENGTHS))
    flush_mask = np.where(suits == flush_suit[:, None], bit, 0).sum(axis=1)
    straight_flush = np.where(flush, straight_top(flush_mask), -1)
    straight = straight_top(held)

    fours, threes = counts == 4, counts == 3
    twice = counts >= 2
    trips = _highest(threes, 1)[:, 0]
    quads = _highest(fours, 1)[:, 0]
    kickers = counts > 0
    kickers[rows, quads] = False
    quad_key = np.stack([quads, _highest(kickers, 1)[:, 0]], axis=1)
    second = twice.copy()
    second[rows, trips] = False
    house = threes.any(axis=1) & (twice.sum(axis=1) >= 2)
    house_key = np.stack([trips, _highest(second, 1)[:, 0]], axis=1)
    singles = counts == 1
    pairs = _highest(counts == 2, 2)
    rest = counts > 0
    rest[rows, pairs[:, 0]] = False
    rest[rows, pairs[:, 1]] = False
    two_pair_key = np.concatenate([pairs, _highest(rest, 1)], axis=1)

    categories = [
        (straight_flush >= 0, 9, straight_flush[:, None]),
        (fours.any(axis=1), 8, quad_key),
        (house, 7, house_key),
        (flush, 6, _highest(_bits(flush_mask), 5)),
        (straight >= 0, 5, straight[:, None]),
        (threes.any(axis=1), 4, np.concatenate([trips[:, None], _highest(singles, 2)], 1)),
        ((counts == 2).sum(axis=1) >= 2, 3, two_pair_key),
        ((counts == 2).any(axis=1), 2, np.concatenate([pairs[:, :1], _highest(singles, 3)], 1)),
        (np.ones(size, dtype=bool), 1, _highest(counts > 0, 5)),
    ]
    score = np.zeros(size, dtype=np.int64)
    decided = np.zeros(size, dtype=bool)
    for present, category, key in categories:
        padded = np.zeros((size, 5), dtype=np.int64)
        padded[:, : key.shape[1]] = key
        value = category * STRENGTHS**5 + padded @ PLACE
        score = np.where(present & ~decided, value, score)
        decided |= present
    return score
