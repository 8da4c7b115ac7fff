"""Leduc hold'em's rules for one game (RLCard 1.2's LeducholdemGame, its limit hold'em Round
and its Judger), as pure JAX functions (vmap for a batch).

Cards are codes 0..5 in RLCard's deck order (SJ, HJ, SQ, HQ, SK, HK): rank = code // 2
(0 jack, 1 queen, 2 king). -1 is "no public card".

Hand-written known-good port: a test subject for the verifier, not model output.
"""

import jax
import jax.numpy as jnp

CALL, RAISE, FOLD, CHECK = 0, 1, 2, 3
ALLOWED_RAISES = 2
BIG_BLIND = 2
# The second round's raise is twice the game's raise (the big blind), whatever the round held.
SECOND_ROUND_RAISE = 2 * BIG_BLIND
OBS_SIZE = 36
MY_CHIPS, THEIR_CHIPS = 6, 21
SLOTS = jnp.arange(OBS_SIZE)
SEATS = jnp.arange(2)


def legal_actions(raised: jax.Array, have_raised: jax.Array, pointer: jax.Array) -> jax.Array:
    """bool[4]: call, raise, fold, check for the player at `pointer` (Round.get_legal_actions):
    call only when behind this round's highest bet, check only when level with it, raise
    while the round has had fewer than two raises, fold always."""
    mine = jnp.where(pointer == 0, raised[0], raised[1])
    top = jnp.maximum(raised[0], raised[1])
    return jnp.stack([mine < top, have_raised < ALLOWED_RAISES, jnp.bool_(True), mine >= top])


def observe(hands: jax.Array, public: jax.Array, chips: jax.Array, player: jax.Array) -> jax.Array:
    """float32[36]: the player's view (LeducholdemEnv._extract_state), one-hot: its card's rank
    at 0-2, the public card's at 3-5 (none before it is dealt), its chips at 6 + n, the
    opponent's at 21 + n."""
    hand = jnp.where(player == 0, hands[0], hands[1])
    mine = jnp.where(player == 0, chips[0], chips[1])
    theirs = chips[0] + chips[1] - mine
    public_slot = jnp.where(public >= 0, 3 + public // 2, -1)
    hot = (
        (hand // 2 == SLOTS)
        | (public_slot == SLOTS)
        | (MY_CHIPS + mine == SLOTS)
        | (THEIR_CHIPS + theirs == SLOTS)
    )
    return hot.astype(jnp.float32)


def payoffs(hands: jax.Array, public: jax.Array, chips: jax.Array, folded: jax.Array) -> jax.Array:
    """float32[2]: each player's chips won or lost over the big blind (Judger.judge_game): the
    one player left after a fold takes the pot; else the first player whose card pairs the
    public card; else the higher rank; equal ranks split the pot."""
    ranks = hands // 2
    pairs = ranks == public // 2
    first_pair = pairs & ~((SEATS == 1) & pairs[0])
    high = ranks == jnp.maximum(ranks[0], ranks[1])
    winners = jnp.where(folded.any(), ~folded, jnp.where(pairs.any(), first_pair, high))
    total = (chips[0] + chips[1]).astype(jnp.float32)
    each = total / winners.sum().astype(jnp.float32)
    won = jnp.where(winners, each - chips, -chips.astype(jnp.float32))
    return (won / BIG_BLIND).astype(jnp.float32)
