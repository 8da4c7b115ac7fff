"""The state bridge of PettingZoo's Leduc hold'em (leduc_holdem_v4.env()), for envport.

Under the AEC env is RLCard's LeducholdemGame (`env.unwrapped.env.game`): a dealer with the
six-card deck, two players (hand, chips in the pot, alive or folded), a betting round (chips
raised in it per player, raises so far, how many have acted without raising, the raise size,
whose turn) and the game's own counters (round, public card, whose turn). All of the game's
chance is drawn at reset (the deck's shuffle, then the first player); a step deals the public
card from the deck already shuffled, so the state below decides every step.

Cards are codes 0..5 in the order RLCard builds the deck: spade jack, heart jack, spade
queen, heart queen, spade king, heart king (rank = code // 2; suits never decide Leduc,
but they say which cards are left). `public_card` is -1 before the second round. `deck` is
the cards left, bottom first: RLCard deals from its end (`list.pop()`).
"""

from __future__ import annotations

from typing import Any

from rlcard.games.base import Card

from envport.targets.turns import fresh_turn

# RLCard's Leduc deck, in the order `LeducholdemDealer` builds it: code i is CARDS[i].
CARDS = (("S", "J"), ("H", "J"), ("S", "Q"), ("H", "Q"), ("S", "K"), ("H", "K"))
NO_CARD = -1
PLAYERS = 2


def code(card: Any) -> int:
    """A card's code: its place in RLCard's unshuffled deck."""
    return CARDS.index((card.suit, card.rank))


def card(value: int) -> Card:
    return Card(*CARDS[int(value)])


def read_state(env: Any) -> dict[str, Any]:
    aec = env.unwrapped
    game = aec.env.game
    betting = game.round
    state: dict[str, Any] = {
        "deck": [code(c) for c in game.dealer.deck],
        "public_card": NO_CARD if game.public_card is None else code(game.public_card),
        "round_counter": int(game.round_counter),
        "game_pointer": int(game.game_pointer),
        "round.raised": [int(r) for r in betting.raised],
        "round.have_raised": int(betting.have_raised),
        "round.not_raise_num": int(betting.not_raise_num),
        "round.raise_amount": int(betting.raise_amount),
        "current_player": aec.possible_agents.index(aec.agent_selection),
    }
    for seat, player in enumerate(game.players):
        state[f"hand.player_{seat}"] = code(player.hand)
        state[f"chips.player_{seat}"] = int(player.in_chips)
        state[f"folded.player_{seat}"] = player.status == "folded"
        state[f"rewards.player_{seat}"] = float(aec.rewards[aec.possible_agents[seat]])
    return state


def write_state(env: Any, state: dict[str, Any]) -> None:
    aec = env.unwrapped
    game = aec.env.game
    game.dealer.deck = [card(c) for c in state["deck"]]
    public = int(state["public_card"])
    game.public_card = None if public == NO_CARD else card(public)
    game.round_counter = int(state["round_counter"])
    pointer = int(state["game_pointer"])
    game.game_pointer = pointer
    betting = game.round
    betting.game_pointer = pointer
    betting.raised = [int(r) for r in state["round.raised"]]
    betting.have_raised = int(state["round.have_raised"])
    betting.not_raise_num = int(state["round.not_raise_num"])
    betting.raise_amount = int(state["round.raise_amount"])
    for seat, player in enumerate(game.players):
        player.hand = card(state[f"hand.player_{seat}"])
        player.in_chips = int(state[f"chips.player_{seat}"])
        player.status = "folded" if bool(state[f"folded.player_{seat}"]) else "alive"
    fresh_turn(env, int(state["current_player"]))
    # A game in play has paid nothing yet; a written reward is what the last move paid.
    for seat, agent in enumerate(aec.possible_agents):
        aec.rewards[agent] = float(state[f"rewards.player_{seat}"])
