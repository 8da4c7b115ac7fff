"""Texas hold'em's betting, view and payoffs for one game (RLCard 1.2's limit hold'em Round,
LimitholdemEnv._extract_state and Judger), as pure JAX functions (vmap for a batch).

Cards are codes 0..51 in RLCard's deck order (13 * suit + rank, suits S H D C, ranks
A 2 .. K); -1 on the board is a card not dealt yet.

Hand-written known-good port: a test subject for the verifier, not model output.
"""

import jax
import jax.numpy as jnp

from .hands import score

CALL, RAISE, FOLD, CHECK = 0, 1, 2, 3
ALLOWED_RAISES = 4
BIG_BLIND = 2
# The turn's and the river's raise is twice the game's raise (the big blind).
LATE_RAISE = 2 * BIG_BLIND
CARDS = 52
OBS_SIZE = 72
RAISE_SLOTS = 5  # a round's raises one-hot, 0..4
SLOTS = jnp.arange(OBS_SIZE)


def legal_actions(raised: jax.Array, have_raised: jax.Array, pointer: jax.Array) -> jax.Array:
    """bool[4]: call, raise, fold, check for the player at `pointer` (Round.get_legal_actions):
    call only when behind this round's highest bet, check only when level with it, raise
    while the round has had fewer than four raises, fold always."""
    mine = jnp.where(pointer == 0, raised[0], raised[1])
    top = jnp.maximum(raised[0], raised[1])
    return jnp.stack([mine < top, have_raised < ALLOWED_RAISES, jnp.bool_(True), mine >= top])


def observe(
    hands: jax.Array, board: jax.Array, raise_nums: jax.Array, player: jax.Array
) -> jax.Array:
    """float32[72]: the player's view (LimitholdemEnv._extract_state): its two hole cards and
    the board's dealt cards one-hot over the 52 codes (-1 marks nothing), then each of the
    four betting rounds' raises one-hot at 52 + 5 * round + raises."""
    hole = jnp.where(player == 0, hands[0], hands[1])
    hot = jnp.concatenate([hole, board, CARDS + RAISE_SLOTS * jnp.arange(4) + raise_nums])
    return jnp.any(hot[:, None] == SLOTS, axis=0).astype(jnp.float32)


def payoffs(hands: jax.Array, board: jax.Array, chips: jax.Array, folded: jax.Array) -> jax.Array:
    """float32[2]: each player's chips won or lost over the big blind (Judger.judge_game): the
    one player left after a fold takes the pot; else the better best five of seven cards
    (hands.score); equal hands split the pot."""
    # A hand ended by a fold may have no full board: its cards are never compared.
    shown = jnp.maximum(board, 0)
    first = score(jnp.concatenate([hands[0], shown]))
    second = score(jnp.concatenate([hands[1], shown]))
    best = jnp.stack([first >= second, second >= first])
    winners = jnp.where(folded.any(), ~folded, best)
    total = (chips[0] + chips[1]).astype(jnp.float32)
    each = total / winners.sum().astype(jnp.float32)
    won = jnp.where(winners, each - chips, -chips.astype(jnp.float32))
    return (won / BIG_BLIND).astype(jnp.float32)
