"""Texas hold'em (PettingZoo 1.27 `pettingzoo.classic.texas_holdem_v4.env()`: RLCard 1.2's
limit hold'em under TerminateIllegalWrapper(illegal_reward=-1)) in envport's two-player
NumPy contract: pure functions over a batch of B games, a state being a dict of arrays with
a leading B axis (no autoreset; no function modifies its inputs).

Exports:
    init(rng: np.random.Generator, num_envs: int) -> state
    step(state, actions: int[B]) -> state
    state_from_reference(ref: dict of [B, ...] arrays) -> state
    state_to_reference(state) -> dict of [B, ...] arrays

All of the game's chance is drawn by `init` (RLCard's order: the deck's shuffle, four hole
cards popped from its end, player_0 first, alternately, then the small blind, who acts
first); `step` draws nothing: the board is dealt from the deck's end. An illegal action
ends the game terminated AND truncated, -1 for the mover, the turn to player 0
(PettingZoo's `_deads_step_first`), the mask left as the mover's. A finished game stepped
again is unchanged with rewards 0.

Hand-written known-good port: a test subject for the verifier, not model output.
"""

import numpy as np

from .rules import (
    ALLOWED_RAISES,
    CALL,
    CHECK,
    FOLD,
    LATE_RAISE,
    RAISE,
    legal_actions,
    observe,
    payoffs,
)

DECK = 52
DEALT = DECK - 4  # the deck's size once the hole cards are out
BLINDS = (1, 2)  # the small blind's chips (who acts first), the big blind's
FIRST_RAISE = 2
FLOP, TURN, RIVER = 3, 4, 5  # board cards out once rounds 0, 1, 2 are over
ROUNDS = 4
GAME = (
    "hands",
    "board",
    "deck",
    "deck_length",
    "chips",
    "folded",
    "raise_nums",
    "raised",
    "have_raised",
    "not_raise_num",
    "raise_amount",
    "round_counter",
    "game_pointer",
)


def _view(game: dict, player, rewards, mask, terminated, truncated) -> dict:
    obs = observe(game["hands"], game["board"], game["raise_nums"], player)
    return {
        **game,
        "current_player": player.astype(np.int32),
        "observation": obs,
        "legal_action_mask": mask,
        "rewards": rewards.astype(np.float32),
        "terminated": terminated,
        "truncated": truncated,
    }


def _begin(game: dict, player, rewards) -> dict:
    """A hand in play with `player` to move, as the bridge and RLCard's reset leave it."""
    mask = legal_actions(game["raised"], game["have_raised"], game["game_pointer"])
    done = np.zeros(len(player), dtype=bool)
    return _view(game, player, rewards, mask, done, done.copy())


def init(rng: np.random.Generator, num_envs: int) -> dict:
    decks = rng.permuted(np.tile(np.arange(DECK), (num_envs, 1)), axis=1)
    first = rng.integers(0, 2, size=num_envs)
    rows = np.arange(num_envs)
    chips = np.full((num_envs, 2), BLINDS[1], dtype=np.int64)
    chips[rows, first] = BLINDS[0]
    game = {
        # Popped from the deck's end in turn: player_0, player_1, player_0, player_1.
        "hands": np.stack([decks[:, [51, 49]], decks[:, [50, 48]]], axis=1),
        "board": np.full((num_envs, 5), -1, dtype=np.int64),
        "deck": decks[:, :DEALT].copy(),
        "deck_length": np.full(num_envs, DEALT, dtype=np.int64),
        "chips": chips,
        "folded": np.zeros((num_envs, 2), dtype=bool),
        "raise_nums": np.zeros((num_envs, ROUNDS), dtype=np.int64),
        "raised": chips.copy(),
        "have_raised": np.zeros(num_envs, dtype=np.int64),
        "not_raise_num": np.zeros(num_envs, dtype=np.int64),
        "raise_amount": np.full(num_envs, FIRST_RAISE, dtype=np.int64),
        "round_counter": np.zeros(num_envs, dtype=np.int64),
        "game_pointer": first.astype(np.int64),
    }
    return _begin(game, first, np.zeros((num_envs, 2)))


def _deal(game: dict, over: np.ndarray) -> None:
    """At a round's end, the flop's three cards (after the first round) or one card (after
    the second and third) popped from the deck's end onto the board's next places."""
    rows = np.arange(len(over))
    counter = game["round_counter"]
    dealt = np.where(counter == 0, FLOP, np.where(counter <= 2, 1, 0)) * over
    shown = np.where(counter == 0, 0, counter + 2)  # board places already filled
    for card in range(FLOP):
        deal = card < dealt
        top = game["deck"][rows, np.maximum(game["deck_length"] - 1 - card, 0)]
        place = np.minimum(shown + card, 4)
        game["board"][rows, place] = np.where(deal, top, game["board"][rows, place])
    game["deck_length"] = game["deck_length"] - dealt


def _bet(game: dict, actions: np.ndarray) -> dict:
    """Round.proceed_round for a legal action, then the game's move to the next round."""
    game = {k: np.array(v, copy=True) for k, v in game.items()}
    rows = np.arange(len(actions))
    pointer = game["game_pointer"]
    raised, chips = game["raised"], game["chips"]
    mine, top = raised[rows, pointer], raised.max(axis=1)
    call, bet, fold, check = (actions == a for a in (CALL, RAISE, FOLD, CHECK))
    target = np.where(call, top, np.where(bet, top + game["raise_amount"], mine))
    chips[rows, pointer] += target - mine
    raised[rows, pointer] = target
    game["have_raised"] = game["have_raised"] + bet
    game["not_raise_num"] = np.where(bet, 1, game["not_raise_num"] + (call | check))
    game["folded"][rows, pointer] |= fold
    following = 1 - pointer
    following = np.where(game["folded"][rows, following], pointer, following)
    # The next round is opened by the player after the one who closed this one.
    game["game_pointer"] = following
    counter = np.minimum(game["round_counter"], ROUNDS - 1)
    game["raise_nums"][rows, counter] = game["have_raised"]
    # The round ends when both have acted without raising: the board is dealt, and from
    # the turn on a raise is twice the big blind.
    over = game["not_raise_num"] >= 2
    _deal(game, over)
    late = over & (game["round_counter"] == 1)
    game["raise_amount"] = np.where(late, LATE_RAISE, game["raise_amount"])
    game["round_counter"] = game["round_counter"] + over
    game["have_raised"] = np.where(over, 0, game["have_raised"])
    game["not_raise_num"] = np.where(over, 0, game["not_raise_num"])
    raised[over] = 0
    return game


def step(state: dict, actions) -> dict:
    actions = np.asarray(actions).astype(np.int64)
    size = len(actions)
    rows = np.arange(size)
    game = {k: state[k] for k in GAME}
    movers = state["current_player"].astype(np.int64)
    # The wrapper reads the mask it showed the mover.
    legal = state["legal_action_mask"][rows, actions]
    played = _bet(game, actions)
    over = played["folded"].any(axis=1) | (played["round_counter"] >= ROUNDS)
    # An illegal action leaves the game as it was.
    after_game = {k: np.where(_wide(legal, v), v, game[k]) for k, v in played.items()}
    ended = over & legal
    paid = payoffs(
        after_game["hands"], after_game["board"], after_game["chips"], after_game["folded"]
    )
    illegal_paid = np.zeros((size, 2))
    illegal_paid[rows, movers] = -1.0
    # PettingZoo sets rewards only at the end; in play they stay as they were.
    rewards = np.where(
        legal[:, None], np.where(ended[:, None], paid, state["rewards"]), illegal_paid
    )
    following = np.where(legal & ~over, after_game["game_pointer"], 0)
    mask = legal_actions(
        after_game["raised"], after_game["have_raised"], after_game["game_pointer"]
    )
    mask = np.where(legal[:, None], mask & ~ended[:, None], state["legal_action_mask"])
    after = _view(after_game, following, rewards, mask, ended | ~legal, ~legal)
    finished = state["terminated"] | state["truncated"]
    kept = {**state, "rewards": np.zeros((size, 2), np.float32)}
    return {k: np.where(_wide(finished, v), kept[k], v) for k, v in after.items()}


def _wide(flags: np.ndarray, like: np.ndarray) -> np.ndarray:
    return flags.reshape((-1,) + (1,) * (np.ndim(like) - 1))


def _seats(ref: dict, name: str, dtype) -> np.ndarray:
    return np.stack([np.asarray(ref[f"{name}.player_{i}"], dtype) for i in (0, 1)], axis=1)


def state_from_reference(ref: dict) -> dict:
    """Hands in play from the reference's leaves (docs of the spec's [state]): not finished.
    The raise cap (`round.allowed_raise_num`) is RLCard's constant 4, not a state here."""
    length = np.asarray(ref["deck.length"], dtype=np.int64)
    size = len(length)
    deck = np.asarray(ref["deck"], dtype=np.int64).reshape(size, -1)
    game = {
        "hands": _seats(ref, "hand", np.int64).reshape(size, 2, 2),
        "board": np.asarray(ref["board"], np.int64).reshape(size, 5),
        "deck": np.where(np.arange(deck.shape[1]) < length[:, None], deck, 0),
        "deck_length": length,
        "chips": _seats(ref, "chips", np.int64),
        "folded": _seats(ref, "folded", bool),
        "raise_nums": np.asarray(ref["raise_nums"], np.int64).reshape(size, ROUNDS),
        "raised": np.asarray(ref["round.raised"], np.int64).reshape(size, 2),
        "have_raised": np.asarray(ref["round.have_raised"], np.int64),
        "not_raise_num": np.asarray(ref["round.not_raise_num"], np.int64),
        "raise_amount": np.asarray(ref["round.raise_amount"], np.int64),
        "round_counter": np.asarray(ref["round_counter"], np.int64),
        "game_pointer": np.asarray(ref["game_pointer"], np.int64),
    }
    game = {k: np.array(v, copy=True) for k, v in game.items()}
    rewards = _seats(ref, "rewards", np.float64)
    return _begin(game, np.asarray(ref["current_player"], np.int64), rewards)


def state_to_reference(state: dict) -> dict:
    size = len(state["deck_length"])
    ref = {
        "deck": state["deck"].astype(np.int64),
        "deck.length": state["deck_length"].astype(np.int64),
        "board": state["board"].astype(np.int64),
        "raise_nums": state["raise_nums"].astype(np.int64),
        "round_counter": state["round_counter"].astype(np.int64),
        "game_pointer": state["game_pointer"].astype(np.int64),
        "round.raised": state["raised"].astype(np.int64),
        "round.have_raised": state["have_raised"].astype(np.int64),
        "round.not_raise_num": state["not_raise_num"].astype(np.int64),
        "round.raise_amount": state["raise_amount"].astype(np.int64),
        "round.allowed_raise_num": np.full(size, ALLOWED_RAISES, dtype=np.int64),
        "current_player": state["current_player"].astype(np.int64),
    }
    for i in (0, 1):
        ref[f"hand.player_{i}"] = state["hands"][:, i].astype(np.int64)
        ref[f"chips.player_{i}"] = state["chips"][:, i].astype(np.int64)
        ref[f"folded.player_{i}"] = state["folded"][:, i].astype(bool)
        ref[f"rewards.player_{i}"] = state["rewards"][:, i].astype(np.float64)
    return ref
