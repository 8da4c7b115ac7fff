"""Which drawn Texas hold'em positions a game can reach, for the spec's `state.valid`.

A deal is the 52 cards once each: two hole cards a player, the board's cards dealt so far
(none in the first betting round, three after it, then four, then five), and the rest in
the deck.
"""

from __future__ import annotations

from typing import Any

import numpy as np

DECK = 52
NO_CARD = -1
# Board cards dealt when `round_counter` betting rounds are over (the hand ends after 4).
BOARD_DEALT = (0, 3, 4, 5, 5)


def dealt(hand: Any, board: Any, deck: Any, round_counter: Any) -> bool:
    """Whether the hole cards, the board and the deck are the 52 cards once each, with the
    board's first cards dealt (the rest -1) as the finished rounds say."""
    rounds = int(round_counter)
    if not 0 <= rounds < len(BOARD_DEALT):
        return False
    shown = np.asarray(board).reshape(-1).tolist()
    count = BOARD_DEALT[rounds]
    if any(c == NO_CARD for c in shown[:count]) or any(c != NO_CARD for c in shown[count:]):
        return False
    cards = [
        *np.asarray(hand.player_0).reshape(-1).tolist(),
        *np.asarray(hand.player_1).reshape(-1).tolist(),
        *shown[:count],
        *np.asarray(deck).reshape(-1).tolist(),
    ]
    return sorted(cards) == list(range(DECK))
