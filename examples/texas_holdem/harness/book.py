"""Start positions where Texas hold'em's showdown rules decide, for `[state.reached] book`.

Random deals give a player's seven cards a straight flush about once in 3,200 hands and four
of a kind once in 600, and a tie decided by a third kicker is rarer still, so the book deals
them: each deal below is put at the start of the river (the board's five cards out, both
players level in chips) and envport plays every line of three actions from it (`depth = 3`),
checks and calls to the showdown, raises to the cap, folds. The deals make every category
RLCard's `Hand` knows win and lose at showdown (straight flushes, the wheel's among them;
four of a kind and its kicker; full houses of two trips; flushes of six and seven cards;
straights, the wheel against a higher one; three of a kind, two pair with a third pair as
kicker, one pair and high card down to the last kicker) and split pots in seven of them. The
player to open the river alternates with the deal, so each seat opens; the chips in differ
by the raises the earlier rounds ended with.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from typing import Any

import numpy as np

SUITS = "SHDC"
RANKS = "A23456789TJQK"
RIVER = 3  # betting rounds finished when the river's betting starts
RAISE = 2  # the first two rounds' raise; the last two raise twice it

# (player_0's hole cards, player_1's, the board): rank then suit, 'T' for ten.
DEALS = (
    # straight flush against four of a kind; the wheel's; a higher one against a lower
    ("Qh Kh", "9c 2c", "9h Th Jh 9s 9d"),
    ("4c 5c", "Ad Ah", "Ac 2c 3c 8d 9s"),
    ("4s 2d", "9s 2h", "5s 6s 7s 8s Kd"),
    # four of a kind: the kicker decides, a kicker on the board splits, over a full house
    ("Ah 2c", "Kh Kd", "Qs Qh Qd Qc 3h"),
    ("2h 3h", "Kd Qd", "7s 7h 7d 7c As"),
    ("5c 5d", "Ks 3d", "5s 5h Kh Kc 2d"),
    # full houses: trips against trips, the pair deciding, two trips, splits, over a flush
    ("8d 2c", "4h 3c", "8s 8h 4d 4c Ks"),
    ("Ks Kd", "5s 5d", "Js Jh Jd 5c 2h"),
    ("9d 6s", "6h 2d", "9s 9h 6d 6c 2s"),
    ("2c 3c", "2d 5d", "Ts Th Td 4s 4h"),
    ("9d 6s", "9c 2d", "9s 9h 6d 6c 2s"),
    ("Ah 8h", "Jc Js", "Jh 7h 2h Jd 3s"),
    # flushes: the highest card, six and seven of a suit, the board's flush split, over a straight
    ("Ah 3h", "Kh 8h", "2h 7h 9h Jd Qs"),
    ("Kh 3c", "4h 3h", "2h 5h 7h 9h Jh"),
    ("3c 4c", "3d 4d", "2h 5h 7h 9h Jh"),
    ("9d 2d", "9s 4h", "5d 6d 7c 8h Kd"),
    ("Qh 2h", "Kh 3h", "Ah Th 6h 4h 9c"),
    # straights: the higher one, the wheel below 6-high and over trips, a split, the broadway
    ("3h 8d", "8s 9s", "4s 5h 6d 7c Kh"),
    ("As 5c", "5d 6s", "2s 3h 4d Kc Qh"),
    ("As 5d", "9s Kd", "2s 3h 4d 9c 9h"),
    ("2c 3c", "2d 3d", "5s 6h 7d 8c 9h"),
    ("As Kd", "9s 8d", "Ts Jh Qd 2c 3h"),
    ("Ad 4c", "6c 6h", "2s 3d 5h 6s Kc"),
    # three of a kind: the first kicker, the second, the trips' rank, over two pair
    ("Ah 3c", "Kh 3d", "7s 7h 7d 2c 4h"),
    ("Kd 3c", "Qd 3h", "7s 7h 7d Ac 2h"),
    ("8s 8d", "6c 6d", "8h 6s Ks 2d 4c"),
    ("Jc Js", "Qh 9d", "Jd Qs 9c 3h 2d"),
    # two pair: the kicker, a third pair, a third pair as the kicker, the second pair, a split
    ("Ad 2c", "Qd 2h", "Ks Kh 5d 5c 9h"),
    ("9d 2c", "Qd Qh", "Ks Kh 5d 5c 9h"),
    ("2d 3c", "4d 2c", "Ks Kh 5d 5c 2h"),
    ("7s 7d", "6s 3d", "Ks Kh 9d 9c 2h"),
    ("8s 4c", "3s 4d", "Js Jh 8d 3c 2h"),
    ("2c 3c", "2d 4d", "Js Jh 8d 8c Ah"),
    ("As Ks", "Ad Qd", "Ah Kh Qh 7c 2s"),
    # one pair: the higher pair, the first kicker, the third, a split, over high card
    ("Ks 3c", "Jd Ah", "2s 5h 9d Jc Kh"),
    ("Kd Qc", "Kh Jc", "Ks 8h 6d 4c 2h"),
    ("Kd 7c", "Kc 6s", "Ks Qh 9d 4c 2h"),
    ("Kd 2c", "Kc 3s", "Ks Qh 9d 7c 6h"),
    ("2d 2c", "Ad Kc", "Qs Jh 9d 7c 4h"),
    # high card: the ace, the fifth card, the board's five split
    ("Ac 3d", "Qd 4c", "2s 5h 9d Jc Kh"),
    ("5d 3c", "4h 3d", "Ks Qh 9d 7c 2h"),
    ("2d 3c", "2h 4d", "Ks Qh 9d 7c 6h"),
)  # fmt: skip


def _bridge() -> Any:
    """The bridge beside this file (harness files are loaded by path, not as a package)."""
    where = __file__.rsplit("/", 1)[0] + "/reference.py"
    spec = importlib.util.spec_from_file_location("texas_holdem_bridge", where)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def code(name: str) -> int:
    """'Kh' as RLCard's card code (13 * suit + rank, suits S H D C, ranks A 2 .. K)."""
    return 13 * SUITS.index(name[1].upper()) + RANKS.index(name[0].upper())


def cards(names: str) -> list[int]:
    return [code(n) for n in names.split()]


def deals() -> Iterator[tuple[list[int], list[int], list[int]]]:
    """(player_0's hole cards, player_1's, the board) of each deal, as card codes."""
    for first, second, board in DEALS:
        yield cards(first), cards(second), cards(board)


def positions(env: Any) -> Iterator[None]:
    """Put the reference into each start position in turn."""
    write_state = _bridge().write_state
    for index, (first, second, board) in enumerate(deals()):
        used = {*first, *second, *board}
        assert len(used) == 9, f"deal {index} repeats a card"
        rest = [c for c in range(52) if c not in used]
        deck = np.random.default_rng(index).permutation(rest).tolist()
        mover = index % 2
        raises = [index % 3, index % 2, index % 4 // 2, 0]  # the earlier rounds' raises
        level = 2 + RAISE * (raises[0] + raises[1]) + 2 * RAISE * raises[2]
        write_state(env, _state(first, second, board, deck, mover, level, raises))
        yield


def _state(
    first: list[int],
    second: list[int],
    board: list[int],
    deck: list[int],
    mover: int,
    level: int,
    raises: list[int],
) -> dict[str, Any]:
    return {
        "hand.player_0": first,
        "hand.player_1": second,
        "board": board,
        "deck": deck,
        "raise_nums": raises,
        "chips.player_0": level,
        "chips.player_1": level,
        "folded.player_0": False,
        "folded.player_1": False,
        "round.raised": [0, 0],
        "round.have_raised": 0,
        "round.not_raise_num": 0,
        "round.raise_amount": 2 * RAISE,
        "round.allowed_raise_num": 4,
        "round_counter": RIVER,
        "game_pointer": mover,
        "current_player": mover,
        "rewards.player_0": 0.0,
        "rewards.player_1": 0.0,
    }
