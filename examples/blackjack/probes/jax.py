"""L1 probes for the JAX Blackjack port's card functions (harness code, not generated).

`call` runs in the worker with the port module and the step's noise (recorded from the
reference's draws); `expect` asks the reference's own helpers (gymnasium's blackjack module)
about the same hands, or reads the transition. Hands are the structured state's leaves:
padded items and a length.
"""

import numpy as np

from envport.verifiers.draws.probes import probe

HANDS = ("hand.player", "hand.dealer")


def _hand(state, name):
    return state[name][: int(state[f"{name}.length"])].tolist()


def _rules():
    from gymnasium.envs.toy_text import blackjack

    return blackjack


def _helpers(module, state, names):
    import jax.numpy as jnp

    out = {}
    for hand in HANDS:
        cards = jnp.asarray(state[hand], jnp.int32)
        length = jnp.int32(state[f"{hand}.length"])
        for name in names:
            out[f"{name}({hand})"] = getattr(module, name)(cards, length)
    return out


def _expected(state, names):
    rules = _rules()
    return {
        f"{name}({hand})": np.int64(getattr(rules, name)(_hand(state, hand)))
        for hand in HANDS
        for name in names
    }


@probe("cards.sum_hand")
def sum_hand(module, before, action, after, noise):
    return _helpers(module, after, ["sum_hand", "score"])


@sum_hand.expect
def _(before, action, after, transition):
    return _expected(after, ["sum_hand", "score"])


@probe("cards.usable_ace")
def usable_ace(module, before, action, after, noise):
    return _helpers(module, after, ["usable_ace", "is_bust", "is_natural"])


@usable_ace.expect
def _(before, action, after, transition):
    return _expected(after, ["usable_ace", "is_bust", "is_natural"])


@probe("cards.dealer_play")
def dealer_play(module, before, action, after, noise):
    """A stick plays the dealer's hand out with the step's cards; a hit adds one card to the
    player's hand."""
    import jax.numpy as jnp

    draws = jnp.asarray(noise, jnp.int32) + 1
    player = jnp.asarray(before["hand.player"], jnp.int32)
    player_length = jnp.int32(before["hand.player.length"])
    dealer = jnp.asarray(before["hand.dealer"], jnp.int32)
    dealer_length = jnp.int32(before["hand.dealer.length"])
    hit = jnp.asarray(action) == 1  # traced under jit: both branches, then a choice
    grown, longer = module.add_card(player, player_length, draws[0])
    played, played_length = module.dealer_play(dealer, dealer_length, draws)
    return {
        "hand.player": jnp.where(hit, grown, player),
        "hand.player.length": jnp.where(hit, longer, player_length),
        "hand.dealer": jnp.where(hit, dealer, played),
        "hand.dealer.length": jnp.where(hit, dealer_length, played_length),
    }


@dealer_play.expect
def _(before, action, after, transition):
    return {name: after[name] for name in (*HANDS, *(f"{h}.length" for h in HANDS))}
