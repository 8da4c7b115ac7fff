"""L1 probes for the NumPy Blackjack port's card functions (harness code, not generated).

`call` runs in the worker with the port module and the step's noise (recorded from the
reference's draws); `expect` asks the reference's own helpers (gymnasium's blackjack module)
about the same hands, or reads the transition. Hands are the structured state's leaves:
padded items and a length, here as batches of one.
"""

import numpy as np

from envport.verifiers.draws.probes import probe

HANDS = ("hand.player", "hand.dealer")


def _hand(state, name):
    return state[name][: int(state[f"{name}.length"])].tolist()


def _batch(state, hand):
    cards = np.asarray(state[hand], dtype=np.int64)[None].copy()
    return cards, np.asarray([state[f"{hand}.length"]], dtype=np.int64)


def _helpers(module, state, names):
    out = {}
    for hand in HANDS:
        cards, lengths = _batch(state, hand)
        for name in names:
            out[f"{name}({hand})"] = getattr(module, name)(cards, lengths)[0]
    return out


def _expected(state, names):
    from gymnasium.envs.toy_text import blackjack

    return {
        f"{name}({hand})": np.int64(getattr(blackjack, name)(_hand(state, hand)))
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
    draws = np.asarray(noise, dtype=np.int64)[None] + 1
    player, player_length = _batch(before, "hand.player")
    dealer, dealer_length = _batch(before, "hand.dealer")
    if int(action) == 1:
        module.add_card(player, player_length, draws[:, 0], np.asarray([True]))
    else:
        module.dealer_play(dealer, dealer_length, draws, np.asarray([True]))
    return {
        "hand.player": player[0],
        "hand.player.length": player_length[0],
        "hand.dealer": dealer[0],
        "hand.dealer.length": dealer_length[0],
    }


@dealer_play.expect
def _(before, action, after, transition):
    return {name: after[name] for name in (*HANDS, *(f"{h}.length" for h in HANDS))}
