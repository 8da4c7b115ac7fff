"""Texas hold'em's betting, view and payoffs over a batch of B games (RLCard 1.2's limit
hold'em Round, LimitholdemEnv._extract_state and Judger), as pure NumPy functions.

Cards are codes 0..51 in RLCard's deck order (13 * suit + rank, suits S H D C, ranks
A 2 .. K); -1 on the board is a card not dealt yet.

Hand-written known-good port: a test subject for the verifier, not model output.
"""

import numpy as np

from .hands import scores

CALL, RAISE, FOLD, CHECK = 0, 1, 2, 3
ALLOWED_RAISES = 4
BIG_BLIND = 2
# The turn's and the river's raise is twice the game's raise (the big blind).
LATE_RAISE = 2 * BIG_BLIND
CARDS = 52
OBS_SIZE = 72
RAISE_SLOTS = 5  # a round's raises one-hot, 0..4


def legal_actions(raised, have_raised, pointer) -> np.ndarray:
    """bool[B, 4]: call, raise, fold, check for the player at `pointer` (Round.get_legal_actions):
    call only when behind this round's highest bet, check only when level with it, raise
    while the round has had fewer than four raises, fold always."""
    size = len(pointer)
    mine = raised[np.arange(size), pointer]
    top = raised.max(axis=1)
    mask = np.zeros((size, 4), dtype=bool)
    mask[:, CALL] = mine < top
    mask[:, RAISE] = have_raised < ALLOWED_RAISES
    mask[:, FOLD] = True
    mask[:, CHECK] = mine >= top
    return mask


def observe(hands, board, raise_nums, player) -> np.ndarray:
    """float32[B, 72]: the player's view (LimitholdemEnv._extract_state): its two hole cards
    and the board's dealt cards one-hot over the 52 codes, then each of the four betting
    rounds' raises one-hot at 52 + 5 * round + raises."""
    size = len(player)
    rows = np.arange(size)
    obs = np.zeros((size, OBS_SIZE), dtype=np.float32)
    hole = hands[rows, player]
    obs[rows[:, None], hole] = 1.0
    dealt = board >= 0
    obs[np.broadcast_to(rows[:, None], board.shape)[dealt], board[dealt]] = 1.0
    obs[rows[:, None], CARDS + RAISE_SLOTS * np.arange(4) + raise_nums] = 1.0
    return obs


def payoffs(hands, board, chips, folded) -> np.ndarray:
    """float32[B, 2]: each player's chips won or lost over the big blind (Judger.judge_game):
    the one player left after a fold takes the pot; else the better best-five of the seven
    cards (hands.scores); equal hands split the pot."""
    seven = [np.concatenate([hands[:, seat], board], axis=1) for seat in (0, 1)]
    # A hand ended by a fold may have no full board: its cards are never compared.
    seven = [np.where(s >= 0, s, 0) for s in seven]
    score = np.stack([scores(s) for s in seven], axis=1)
    best = score == score.max(axis=1, keepdims=True)
    any_fold = folded.any(axis=1, keepdims=True)
    winners = np.where(any_fold, ~folded, best)
    total = chips.sum(axis=1, keepdims=True).astype(np.float64)
    each = total / winners.sum(axis=1, keepdims=True)
    won = np.where(winners, each - chips, -chips.astype(np.float64))
    return (won / BIG_BLIND).astype(np.float32)
