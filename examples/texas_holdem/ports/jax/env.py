"""Texas hold'em (PettingZoo 1.27 `pettingzoo.classic.texas_holdem_v4.env()`: RLCard 1.2's
limit hold'em under TerminateIllegalWrapper(illegal_reward=-1)) in envport's two-player JAX
contract, pgx-style (one game per call, vmap for a batch; no autoreset). It needs no
`jax_enable_x64`: cards, chips and counters are int32, the observation and rewards float32.

Exports:
    State: NamedTuple (below)
    init(key) -> State
    step(state: State, action: int32, key) -> State
    state_from_reference(ref: dict of arrays) -> State
    state_to_reference(state: State) -> dict of arrays

All of the game's chance is drawn by `init` (RLCard's order: the deck's shuffle, four hole
cards popped from its end, player_0 first, alternately, then the small blind, who acts
first); `step` draws nothing: the board is dealt from the deck's end. An illegal action
ends the game terminated AND truncated, -1 for the mover, the turn to player 0
(PettingZoo's `_deads_step_first`), the mask left as the mover's. A finished game stepped
again is unchanged with rewards 0.

Hand-written known-good port: a test subject for the verifier, not model output.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp

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
FIRST_RAISE = 2
FLOP = 3
ROUNDS = 4
SEATS = jnp.arange(2)
PLACES = jnp.arange(5)
ACTIONS = jnp.arange(4)
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


class State(NamedTuple):
    hands: jax.Array  # int32[2, 2]: each player's hole cards
    board: jax.Array  # int32[5]: the board, -1 where not dealt
    deck: jax.Array  # int32[48]: the cards left, bottom first (dealt from the end)
    deck_length: jax.Array  # int32: how many of `deck` are cards
    chips: jax.Array  # int32[2]: each player's chips in the pot
    folded: jax.Array  # bool[2]
    raise_nums: jax.Array  # int32[4]: the raises each betting round ended with
    raised: jax.Array  # int32[2]: each player's chips put in this betting round
    have_raised: jax.Array  # int32: raises this round
    not_raise_num: jax.Array  # int32: actions since the last raise that did not raise
    raise_amount: jax.Array  # int32: 2 in the first two rounds, 4 in the last two
    round_counter: jax.Array  # int32: betting rounds finished
    game_pointer: jax.Array  # int32: RLCard's player to move
    current_player: jax.Array  # int32: PettingZoo's player to move (0 once the game ends)
    observation: jax.Array  # float32[72]: the player-to-move's view
    legal_action_mask: jax.Array  # bool[4]: call, raise, fold, check
    rewards: jax.Array  # float32[2]: this step's reward, indexed by player
    terminated: jax.Array  # bool
    truncated: jax.Array  # bool: only an illegal action truncates


def _begin(game: dict, player: jax.Array, rewards: jax.Array) -> State:
    """A hand in play with `player` to move, as the bridge and RLCard's reset leave it."""
    return State(
        **game,
        current_player=player,
        observation=observe(game["hands"], game["board"], game["raise_nums"], player),
        legal_action_mask=legal_actions(game["raised"], game["have_raised"], game["game_pointer"]),
        rewards=rewards,
        terminated=jnp.bool_(False),
        truncated=jnp.bool_(False),
    )


def init(key: jax.Array) -> State:
    shuffle, seat = jax.random.split(key)
    deck = jax.random.permutation(shuffle, DECK).astype(jnp.int32)
    first = jax.random.randint(seat, (), 0, 2, dtype=jnp.int32)
    chips = jnp.where(first == SEATS, 1, 2).astype(jnp.int32)
    game = {
        # Popped from the deck's end in turn: player_0, player_1, player_0, player_1.
        "hands": jnp.stack([deck[jnp.array([51, 49])], deck[jnp.array([50, 48])]]),
        "board": jnp.full(5, -1, jnp.int32),
        "deck": deck[:DEALT],
        "deck_length": jnp.int32(DEALT),
        "chips": chips,
        "folded": jnp.zeros(2, bool),
        "raise_nums": jnp.zeros(ROUNDS, jnp.int32),
        "raised": chips,
        "have_raised": jnp.int32(0),
        "not_raise_num": jnp.int32(0),
        "raise_amount": jnp.int32(FIRST_RAISE),
        "round_counter": jnp.int32(0),
        "game_pointer": first,
    }
    return _begin(game, first, jnp.zeros(2, jnp.float32))


def _deal(board, deck, length, counter, over):
    """At a round's end, the flop's three cards (after the first round) or one card (after
    the second and third) popped from the deck's end onto the board's next places."""
    dealt = jnp.where(counter == 0, FLOP, jnp.where(counter <= 2, 1, 0)) * over
    shown = jnp.where(counter == 0, 0, counter + 2)  # board places already filled
    nth = PLACES - shown  # which card of this deal a place takes
    popped = jnp.take(deck, jnp.clip(length - 1 - nth, 0, DEALT - 1))
    board = jnp.where((nth >= 0) & (nth < dealt), popped, board)
    return board, length - dealt


def _bet(s: dict, action: jax.Array) -> dict:
    """Round.proceed_round for a legal action, then the game's move to the next round."""
    pointer = s["game_pointer"]
    seat = pointer == SEATS
    mine = jnp.where(pointer == 0, s["raised"][0], s["raised"][1])
    top = jnp.maximum(s["raised"][0], s["raised"][1])
    call, bet, fold, check = (action == CALL, action == RAISE, action == FOLD, action == CHECK)
    target = jnp.where(call, top, jnp.where(bet, top + s["raise_amount"], mine))
    chips = jnp.where(seat, s["chips"] + target - mine, s["chips"])
    raised = jnp.where(seat, target, s["raised"])
    have_raised = s["have_raised"] + bet
    not_raise = jnp.where(bet, 1, s["not_raise_num"] + (call | check))
    folded = s["folded"] | (seat & fold)
    other = 1 - pointer
    # The next round is opened by the player after the one who closed this one.
    following = jnp.where(jnp.where(other == 0, folded[0], folded[1]), pointer, other)
    counter = s["round_counter"]
    raise_nums = jnp.where(jnp.arange(ROUNDS) == counter, have_raised, s["raise_nums"])
    # The round ends when both have acted without raising: the board is dealt, and from
    # the turn on a raise is twice the big blind.
    over = not_raise >= 2
    board, length = _deal(s["board"], s["deck"], s["deck_length"], counter, over)
    return {
        "hands": s["hands"],
        "board": board,
        "deck": s["deck"],
        "deck_length": length,
        "chips": chips,
        "folded": folded,
        "raise_nums": raise_nums,
        "raised": jnp.where(over, 0, raised),
        "have_raised": jnp.where(over, 0, have_raised),
        "not_raise_num": jnp.where(over, 0, not_raise),
        "raise_amount": jnp.where(over & (counter == 1), LATE_RAISE, s["raise_amount"]),
        "round_counter": counter + over,
        "game_pointer": following,
    }


def step(state: State, action, key: jax.Array) -> State:
    del key  # all of the game's chance was drawn at init
    action = jnp.asarray(action, jnp.int32)
    # A finished game stays as it was, with rewards 0; the wrapper reads the mask it showed
    # the mover, and an illegal action leaves the game as it was.
    finished = state.terminated | state.truncated
    legal = jnp.any((action == ACTIONS) & state.legal_action_mask)
    move = legal & ~finished
    illegal = ~legal & ~finished
    before = {k: getattr(state, k) for k in GAME}
    played = _bet(before, action)
    game = {k: jnp.where(move, played[k], before[k]).astype(before[k].dtype) for k in GAME}
    over = game["folded"][0] | game["folded"][1] | (game["round_counter"] >= ROUNDS)
    ended = move & over
    paid = payoffs(game["hands"], game["board"], game["chips"], game["folded"])
    illegal_paid = jnp.where(state.current_player == SEATS, -1.0, 0.0).astype(jnp.float32)
    # PettingZoo sets rewards only at the end; in play they stay as they were.
    rewards = jnp.where(
        ended, paid, jnp.where(illegal, illegal_paid, jnp.where(finished, 0.0, state.rewards))
    ).astype(jnp.float32)
    following = jnp.where(
        move & ~over, game["game_pointer"], jnp.where(finished, state.current_player, 0)
    ).astype(jnp.int32)
    mask = legal_actions(game["raised"], game["have_raised"], game["game_pointer"])
    return State(
        **game,
        current_player=following,
        # A finished game's view is the one it showed: the same game, the same player.
        observation=observe(game["hands"], game["board"], game["raise_nums"], following),
        legal_action_mask=jnp.where(move, mask & ~ended, state.legal_action_mask),
        rewards=rewards,
        terminated=jnp.where(finished, state.terminated, ended | illegal),
        truncated=jnp.where(finished, state.truncated, illegal),
    )


def state_from_reference(ref: dict) -> State:
    """A hand in play from the reference's leaves (the spec's [state]): not finished. The
    raise cap (`round.allowed_raise_num`) is RLCard's constant 4, not a state here."""
    length = jnp.asarray(ref["deck.length"], jnp.int32)
    deck = jnp.asarray(ref["deck"], jnp.int32).reshape(DEALT)

    def seats(name, dtype, shape=()):
        return jnp.stack(
            [jnp.asarray(ref[f"{name}.player_{i}"], dtype).reshape(shape) for i in (0, 1)]
        )

    game = {
        "hands": seats("hand", jnp.int32, (2,)),
        "board": jnp.asarray(ref["board"], jnp.int32).reshape(5),
        "deck": jnp.where(length > jnp.arange(DEALT), deck, 0),
        "deck_length": length,
        "chips": seats("chips", jnp.int32),
        "folded": seats("folded", bool),
        "raise_nums": jnp.asarray(ref["raise_nums"], jnp.int32).reshape(ROUNDS),
        "raised": jnp.asarray(ref["round.raised"], jnp.int32).reshape(2),
        "have_raised": jnp.asarray(ref["round.have_raised"], jnp.int32),
        "not_raise_num": jnp.asarray(ref["round.not_raise_num"], jnp.int32),
        "raise_amount": jnp.asarray(ref["round.raise_amount"], jnp.int32),
        "round_counter": jnp.asarray(ref["round_counter"], jnp.int32),
        "game_pointer": jnp.asarray(ref["game_pointer"], jnp.int32),
    }
    player = jnp.asarray(ref["current_player"], jnp.int32)
    return _begin(game, player, seats("rewards", jnp.float32))


def state_to_reference(state: State) -> dict:
    ref = {
        "deck": state.deck,
        "deck.length": state.deck_length,
        "board": state.board,
        "raise_nums": state.raise_nums,
        "round_counter": state.round_counter,
        "game_pointer": state.game_pointer,
        "round.raised": state.raised,
        "round.have_raised": state.have_raised,
        "round.not_raise_num": state.not_raise_num,
        "round.raise_amount": state.raise_amount,
        "round.allowed_raise_num": jnp.int32(ALLOWED_RAISES),
        "current_player": state.current_player,
    }
    for i in (0, 1):
        ref[f"hand.player_{i}"] = state.hands[i]
        ref[f"chips.player_{i}"] = state.chips[i]
        ref[f"folded.player_{i}"] = state.folded[i]
        ref[f"rewards.player_{i}"] = state.rewards[i]
    return ref
