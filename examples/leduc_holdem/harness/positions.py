"""Which drawn Leduc positions a game can reach, for the spec's `state.valid`.

A deal is six distinct cards: two hands, the public card once the first round is over, and
the rest still in the deck (four before the public card is dealt, three after).
"""

from __future__ import annotations

from typing import Any

import numpy as np

DECK = 6
NO_CARD = -1


def dealt(hand: Any, public_card: Any, deck: Any, round_counter: Any) -> bool:
    """Whether the hands, the public card and the deck are the six cards once each, with the
    public card dealt exactly when a betting round is over."""
    public = int(public_card)
    if (public != NO_CARD) != (int(round_counter) > 0):
        return False
    cards = [int(hand.player_0), int(hand.player_1), *np.asarray(deck).reshape(-1).tolist()]
    if public != NO_CARD:
        cards.append(public)
    return sorted(cards) == list(range(DECK))
