"""Leduc hold'em's rules over a batch of B games (RLCard 1.2's LeducholdemGame, its limit
hold'em Round, and its Judger), as pure NumPy functions.

Cards are codes 0..5 in RLCard's deck order (SJ, HJ, SQ, HQ, SK, HK): rank = code // 2
(0 jack, 1 queen, 2 king). -1 is "no public card".

Hand-written known-good port: a test subject for the verifier, not model output.
"""

import numpy as np

CALL, RAISE, FOLD, CHECK = 0, 1, 2, 3
ALLOWED_RAISES = 2
BIG_BLIND = 2
# The second round's raise is twice the game's raise (the big blind), whatever the round held.
SECOND_ROUND_RAISE = 2 * BIG_BLIND
OBS_SIZE = 36
MY_CHIPS, THEIR_CHIPS = 6, 21


def legal_actions(raised, have_raised, pointer) -> np.ndarray:
    """bool[B, 4]: call, raise, fold, check for the player at `pointer` (Round.get_legal_actions):
    call only when behind this round's highest bet, check only when level with it, raise
    while the round has had fewer than two raises, fold always."""
    size = len(pointer)
    mine = raised[np.arange(size), pointer]
    top = raised.max(axis=1)
    mask = np.zeros((size, 4), dtype=bool)
    mask[:, CALL] = mine < top
    mask[:, RAISE] = have_raised < ALLOWED_RAISES
    mask[:, FOLD] = True
    mask[:, CHECK] = mine >= top
    return mask


def observe(hands, public, chips, player) -> np.ndarray:
    """float32[B, 36]: the player's view (LeducholdemEnv._extract_state), one-hot: its card's
    rank at 0-2, the public card's at 3-5, its chips at 6 + n, the opponent's at 21 + n."""
    size = len(player)
    rows = np.arange(size)
    obs = np.zeros((size, OBS_SIZE), dtype=np.float32)
    obs[rows, hands[rows, player] // 2] = 1.0
    dealt = public >= 0
    obs[rows[dealt], 3 + public[dealt] // 2] = 1.0
    mine = chips[rows, player]
    obs[rows, MY_CHIPS + mine] = 1.0
    obs[rows, THEIR_CHIPS + chips.sum(axis=1) - mine] = 1.0
    return obs


def payoffs(hands, public, chips, folded) -> np.ndarray:
    """float32[B, 2]: each player's chips won or lost over the big blind (Judger.judge_game):
    the one player left after a fold takes the pot; else the first player whose card pairs
    the public card; else the higher rank; equal ranks split the pot."""
    ranks = hands // 2
    pairs = ranks == (public // 2)[:, None]
    high = ranks == ranks.max(axis=1, keepdims=True)
    any_fold = folded.any(axis=1, keepdims=True)
    paired = pairs.any(axis=1, keepdims=True)
    first_pair = pairs & ~(pairs[:, :1] & np.array([[False, True]]))
    winners = np.where(any_fold, ~folded, np.where(paired, first_pair, high))
    total = chips.sum(axis=1, keepdims=True).astype(np.float64)
    each = total / winners.sum(axis=1, keepdims=True)
    won = np.where(winners, each - chips, -chips.astype(np.float64))
    return (won / BIG_BLIND).astype(np.float32)
