"""Blackjack's randomness as the port's noise (harness code, not generated).

The reference draws each card with `np_random.choice(deck)`: one draw on a hit, and on a
stick as many as the dealer takes to reach 17, so the number of draws varies. The port's
noise has a fixed shape: the next DRAWS cards of the infinite deck, as value minus one
(0..9), the step's own draws first. Slots the reference did not draw are filled with cards
from the same deck, drawn by a generator seeded from the step itself (reproducible), so the
reference's noise is distributed exactly as the port's `sample_noise` and a correct port
never reads the filler.
"""

import hashlib

import numpy as np

DRAWS = 12
DECK = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10]


def noise_from_draws(draws, before, action, env):
    methods = {d.method for d in draws}
    if methods - {"choice"}:
        raise ValueError(f"expected np_random.choice(deck) draws only, got {sorted(methods)}")
    cards = [int(d.value) for d in draws]
    if len(cards) > DRAWS:
        raise ValueError(f"a step drew {len(cards)} cards, more than the noise's {DRAWS}")
    digest = hashlib.sha256(np.asarray([*cards, int(action)], dtype=np.int64).tobytes())
    for name in sorted(before):
        digest.update(np.ascontiguousarray(before[name]).tobytes())
    filler = np.random.default_rng(int.from_bytes(digest.digest()[:8], "little"))
    cards += filler.choice(DECK, size=DRAWS - len(cards)).tolist()
    return np.asarray(cards, dtype=np.int64) - 1
