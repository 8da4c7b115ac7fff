"""Leduc hold'em (PettingZoo 1.27 `pettingzoo.classic.leduc_holdem_v4.env()`: RLCard 1.2's
game under TerminateIllegalWrapper(illegal_reward=-1)) in envport's two-player JAX contract,
pgx-style (one game per call, vmap for a batch; no autoreset). It needs no `jax_enable_x64`:
the observation and rewards are float32, the player to move int32, and every card and
count a bit field of two int32 words (`State.game`): a state of few small leaves is what a
batch steps fastest (measured at B=4096 against pgx's leduc_holdem: 18 leaves ran at
0.3-0.5x, 7 with the game as int8[19] at 0.82-0.93x, 7 with it as int32[2] at 1.4x).

Exports:
    State: NamedTuple (below)
    init(key) -> State
    step(state: State, action: int32, key) -> State
    state_from_reference(ref: dict of arrays) -> State
    state_to_reference(state: State) -> dict of arrays

All of the game's chance is drawn by `init` (RLCard's order: the deck's shuffle, the two
hands popped from its end, then the small blind, who acts first); `step` draws nothing: the
public card is the deck's last card. An illegal action ends the game terminated AND
truncated, -1 for the mover, the turn to player 0 (PettingZoo's `_deads_step_first`), the
mask left as the mover's. A finished game stepped again is unchanged with rewards 0.

Hand-written known-good port: a test subject for the verifier, not model output.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp

from .rules import CALL, CHECK, FOLD, RAISE, SECOND_ROUND_RAISE, legal_actions, observe, payoffs

DECK = 6
FIRST_RAISE = 2
CODE = jnp.int32  # cards, chips and counters, once unpacked
SEATS = jnp.arange(2)
DECK_SLOTS = jnp.arange(4)
ACTIONS = jnp.arange(4)


# The game's own fields as bit fields of two int32 words (`State.game`): (field, items, bits
# per item, lowest value). A batch steps these as whole-word integer arithmetic, one
# vectorised pass over [B] per word, where a byte per field (int8[19]) made XLA build the
# state from a slice per field and a concatenation (measured at B=4096: 0.82x pgx's
# leduc_holdem as bytes, 1.4x as words). The widths hold every reachable value: chips reach
# 14 (two raises of 2, then two of 4), a round's bets 8, a card code 5 (-1 stored as 0).
WORDS = (
    (  # the deal: set at init, the public card and deck length changed once
        ("hands", 2, 3, 0),  # each player's card code
        ("public_card", 1, 3, -1),  # a card code, -1 before the second round
        ("deck", 4, 3, 0),  # the cards left, bottom first (dealt from the end)
        ("deck_length", 1, 3, 0),  # how many of `deck` are cards
    ),
    (  # the betting
        ("chips", 2, 4, 0),  # each player's chips in the pot
        ("folded", 2, 1, 0),  # 1 where the player folded
        ("raised", 2, 4, 0),  # each player's chips put in this betting round
        ("have_raised", 1, 2, 0),  # raises this round
        ("not_raise_num", 1, 2, 0),  # actions since the last raise that did not raise
        ("raise_amount", 1, 3, 0),  # 2 in the first round, 4 in the second
        ("round_counter", 1, 2, 0),  # betting rounds finished
        ("game_pointer", 1, 1, 0),  # RLCard's player to move
    ),
)


def _places() -> list[tuple[str, int, int, int, list[int]]]:
    """(field, word, bit mask, lowest value, each item's shift) in WORDS' order."""
    places = []
    for word, fields in enumerate(WORDS):
        shift = 0
        for name, items, bits, low in fields:
            places.append(
                (name, word, (1 << bits) - 1, low, [shift + bits * i for i in range(items)])
            )
            shift += bits * items
        assert shift <= 31, "a word's fields must fit an int32 without its sign bit"
    return places


PLACES = _places()


def unpack(game: jax.Array) -> dict:
    """The packed game as named int32 fields (scalars for one-item fields, folded as bool)."""
    out = {}
    for name, word, mask, low, shifts in PLACES:
        items = [((game[word] >> shift) & mask) + low for shift in shifts]
        out[name] = items[0] if len(items) == 1 else jnp.stack(items)
    out["folded"] = out["folded"] > 0
    return out


def pack(fields: dict) -> jax.Array:
    """int32[2]: the named fields in their bit fields (a value past its width wraps)."""
    words = [jnp.int32(0), jnp.int32(0)]
    for name, word, mask, low, shifts in PLACES:
        value = jnp.asarray(fields[name]).astype(jnp.int32).reshape(len(shifts))
        for item, shift in enumerate(shifts):
            words[word] = words[word] | (((value[item] - low) & mask) << shift)
    return jnp.stack(words)


class State(NamedTuple):
    game: jax.Array  # int32[2]: the game's fields in WORDS' bit fields
    current_player: jax.Array  # int32: PettingZoo's player to move (0 once the game ends)
    observation: jax.Array  # float32[36]: the player-to-move's view
    legal_action_mask: jax.Array  # bool[4]: call, raise, fold, check
    rewards: jax.Array  # float32[2]: this step's reward, indexed by player
    terminated: jax.Array  # bool
    truncated: jax.Array  # bool: only an illegal action truncates


def _begin(game: dict, player: jax.Array, rewards: jax.Array) -> State:
    """A hand in play with `player` to move, as the bridge and RLCard's reset leave it."""
    return State(
        game=pack(game),
        current_player=player,
        observation=observe(game["hands"], game["public_card"], game["chips"], player),
        legal_action_mask=legal_actions(game["raised"], game["have_raised"], game["game_pointer"]),
        rewards=rewards,
        terminated=jnp.bool_(False),
        truncated=jnp.bool_(False),
    )


def init(key: jax.Array) -> State:
    shuffle, seat = jax.random.split(key)
    deck = jax.random.permutation(shuffle, DECK).astype(CODE)
    first = jax.random.randint(seat, (), 0, 2, dtype=jnp.int32)
    chips = jnp.where(first == SEATS, 1, 2).astype(CODE)
    game = {
        # player_0 is dealt the deck's last card, player_1 the one below it.
        "hands": jnp.stack([deck[5], deck[4]]),
        "public_card": CODE(-1),
        "deck": deck[:4],
        "deck_length": CODE(4),
        "chips": chips,
        "folded": jnp.zeros(2, bool),
        "raised": chips,
        "have_raised": CODE(0),
        "not_raise_num": CODE(0),
        "raise_amount": CODE(FIRST_RAISE),
        "round_counter": CODE(0),
        "game_pointer": first.astype(CODE),
    }
    return _begin(game, first, jnp.zeros(2, jnp.float32))


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
    following = jnp.where(jnp.where(other == 0, folded[0], folded[1]), pointer, other)
    # The round ends when both have acted without raising; the first round's end deals the
    # public card from the deck's end and doubles the raise.
    over = not_raise >= 2
    deal = over & (s["round_counter"] == 0)
    top_card = jnp.sum(jnp.where(s["deck_length"] - 1 == DECK_SLOTS, s["deck"], 0))
    fields = {
        "hands": s["hands"],
        "public_card": jnp.where(deal, top_card, s["public_card"]),
        "deck": s["deck"],
        "deck_length": s["deck_length"] - deal,
        "chips": chips,
        "folded": folded,
        "raised": jnp.where(over, 0, raised),
        "have_raised": jnp.where(over, 0, have_raised),
        "not_raise_num": jnp.where(over, 0, not_raise),
        "raise_amount": jnp.where(deal, SECOND_ROUND_RAISE, s["raise_amount"]),
        "round_counter": s["round_counter"] + over,
        "game_pointer": following,
    }
    return fields


def step(state: State, action, key: jax.Array) -> State:
    del key  # all of Leduc's chance was drawn at init
    action = jnp.asarray(action, jnp.int32)
    # A finished game stays as it was, with rewards 0; the wrapper reads the mask it showed
    # the mover, and an illegal action leaves the game as it was.
    finished = state.terminated | state.truncated
    legal = jnp.any((action == ACTIONS) & state.legal_action_mask)
    move = legal & ~finished
    illegal = ~legal & ~finished
    before = unpack(state.game)
    packed = jnp.where(move, pack(_bet(before, action)), state.game)
    game = unpack(packed)
    over = game["folded"][0] | game["folded"][1] | (game["round_counter"] >= 2)
    ended = move & over
    paid = payoffs(game["hands"], game["public_card"], game["chips"], game["folded"])
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
        game=packed,
        current_player=following,
        # A finished game's view is the one it showed: the same game, the same player.
        observation=observe(game["hands"], game["public_card"], game["chips"], following),
        legal_action_mask=jnp.where(move, mask & ~ended, state.legal_action_mask),
        rewards=rewards,
        terminated=jnp.where(finished, state.terminated, ended | illegal),
        truncated=jnp.where(finished, state.truncated, illegal),
    )


def state_from_reference(ref: dict) -> State:
    """A hand in play from the reference's leaves (the spec's [state]): not finished."""
    length = jnp.asarray(ref["deck.length"], CODE)
    deck = jnp.asarray(ref["deck"], CODE).reshape(4)
    seat = lambda name, dtype: jnp.stack(  # noqa: E731
        [jnp.asarray(ref[f"{name}.player_{i}"], dtype) for i in (0, 1)]
    )
    game = {
        "hands": seat("hand", CODE),
        "public_card": jnp.asarray(ref["public_card"], CODE),
        "deck": jnp.where(length > DECK_SLOTS, deck, 0),
        "deck_length": length,
        "chips": seat("chips", CODE),
        "folded": seat("folded", bool),
        "raised": jnp.asarray(ref["round.raised"], CODE).reshape(2),
        "have_raised": jnp.asarray(ref["round.have_raised"], CODE),
        "not_raise_num": jnp.asarray(ref["round.not_raise_num"], CODE),
        "raise_amount": jnp.asarray(ref["round.raise_amount"], CODE),
        "round_counter": jnp.asarray(ref["round_counter"], CODE),
        "game_pointer": jnp.asarray(ref["game_pointer"], CODE),
    }
    player = jnp.asarray(ref["current_player"], jnp.int32)
    return _begin(game, player, seat("rewards", jnp.float32))


def state_to_reference(state: State) -> dict:
    game = unpack(state.game)
    ref = {
        "deck": game["deck"],
        "deck.length": game["deck_length"],
        "public_card": game["public_card"],
        "round_counter": game["round_counter"],
        "game_pointer": game["game_pointer"],
        "round.raised": game["raised"],
        "round.have_raised": game["have_raised"],
        "round.not_raise_num": game["not_raise_num"],
        "round.raise_amount": game["raise_amount"],
        "current_player": state.current_player,
    }
    for i in (0, 1):
        ref[f"hand.player_{i}"] = game["hands"][i]
        ref[f"chips.player_{i}"] = game["chips"][i]
        ref[f"folded.player_{i}"] = game["folded"][i]
        ref[f"rewards.player_{i}"] = state.rewards[i]
    return ref
