"""The state bridge of PettingZoo's Texas hold'em (texas_holdem_v4.env()), for envport.

Under the AEC env is RLCard's LimitHoldemGame (`env.unwrapped.env.game`): a dealer with the
52-card deck, two players (two hole cards, chips in the pot, alive or folded), a betting
round (chips raised in it per player, raises so far, how many have acted without raising,
the raise size, the raise cap), and the game's own fields (the board, the round counter,
whose turn, and the raises each betting round ended with, which the observation shows).
All of the game's chance is drawn at reset (the deck's shuffle, then the small blind); a
step deals the board from the deck already shuffled, so the state below decides every step.

Cards are codes 0..51 in the order RLCard builds its deck (`init_standard_deck`, the same
order as its `card2index.json`): suits spades, hearts, diamonds, clubs, each ace, 2, ..., 10,
jack, queen, king; code = 13 * suit + rank. The board is five codes, -1 where a card is not
dealt yet. `deck` is the cards left, bottom first: RLCard deals from its end (`list.pop()`).
"""

from __future__ import annotations

from typing import Any

from rlcard.games.base import Card
from rlcard.games.limitholdem import PlayerStatus

from envport.targets.turns import fresh_turn

SUITS = "SHDC"
RANKS = "A23456789TJQK"
NO_CARD = -1
BOARD = 5


def code(card: Any) -> int:
    """A card's code: its place in RLCard's unshuffled deck."""
    return 13 * SUITS.index(card.suit) + RANKS.index(card.rank)


def card(value: int) -> Card:
    suit, rank = divmod(int(value), 13)
    return Card(SUITS[suit], RANKS[rank])


def read_state(env: Any) -> dict[str, Any]:
    aec = env.unwrapped
    game = aec.env.game
    betting = game.round
    board = [code(c) for c in game.public_cards]
    state: dict[str, Any] = {
        "deck": [code(c) for c in game.dealer.deck],
        "board": board + [NO_CARD] * (BOARD - len(board)),
        "raise_nums": [int(n) for n in game.history_raise_nums],
        "round_counter": int(game.round_counter),
        "game_pointer": int(game.game_pointer),
        "round.raised": [int(r) for r in betting.raised],
        "round.have_raised": int(betting.have_raised),
        "round.not_raise_num": int(betting.not_raise_num),
        "round.raise_amount": int(betting.raise_amount),
        "round.allowed_raise_num": int(betting.allowed_raise_num),
        "current_player": aec.possible_agents.index(aec.agent_selection),
    }
    for seat, player in enumerate(game.players):
        state[f"hand.player_{seat}"] = [code(c) for c in player.hand]
        state[f"chips.player_{seat}"] = int(player.in_chips)
        # RLCard's Round marks a fold with the string 'folded', not PlayerStatus.FOLDED.
        state[f"folded.player_{seat}"] = player.status == "folded"
        state[f"rewards.player_{seat}"] = float(aec.rewards[aec.possible_agents[seat]])
    return state


def write_state(env: Any, state: dict[str, Any]) -> None:
    aec = env.unwrapped
    game = aec.env.game
    game.dealer.deck = [card(c) for c in state["deck"]]
    game.public_cards = [card(c) for c in state["board"] if int(c) != NO_CARD]
    game.history_raise_nums = [int(n) for n in state["raise_nums"]]
    game.round_counter = int(state["round_counter"])
    pointer = int(state["game_pointer"])
    game.game_pointer = pointer
    betting = game.round
    betting.game_pointer = pointer
    betting.raised = [int(r) for r in state["round.raised"]]
    betting.have_raised = int(state["round.have_raised"])
    betting.not_raise_num = int(state["round.not_raise_num"])
    betting.raise_amount = int(state["round.raise_amount"])
    betting.allowed_raise_num = int(state["round.allowed_raise_num"])
    for seat, player in enumerate(game.players):
        player.hand = [card(c) for c in state[f"hand.player_{seat}"]]
        player.in_chips = int(state[f"chips.player_{seat}"])
        # A player alive is PlayerStatus.ALIVE (what the judger tests); a fold is the string
        # RLCard's Round sets.
        alive = not bool(state[f"folded.player_{seat}"])
        player.status = PlayerStatus.ALIVE if alive else "folded"
    fresh_turn(env, int(state["current_player"]))
    # A game in play has paid nothing yet; a written reward is what the last move paid.
    for seat, agent in enumerate(aec.possible_agents):
        aec.rewards[agent] = float(state[f"rewards.player_{seat}"])
