"""Start positions where Leduc's rules decide, for `[state.reached] book`.

Every deal (two hands and the public card to come, in suits too: 120) at the start of the
first betting round, and every deal with its public card out at the start of the second,
after a first round that ended level at 2, 4 or 6 chips each. envport plays every legal
action from each and every line of three (`depth = 3`): raises to the cap and the calls and
folds after them in both rounds, and showdowns of every pair of ranks against every public
card (a pair with the public card, the higher rank, a split pot). The first player
alternates with the deal, so each seat opens both rounds.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from itertools import permutations
from pathlib import Path
from typing import Any


def _bridge() -> Any:
    """The bridge beside this file (harness files are loaded by path, not as a package)."""
    where = Path(__file__).with_name("reference.py")
    spec = importlib.util.spec_from_file_location("leduc_holdem_bridge", where)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CARDS = range(6)
BLINDS = (1, 2)  # the small blind's chips, the big blind's
RAISE = 2  # the first round's raise; the second round's is twice it


def _deals() -> Iterator[tuple[int, int, int, list[int]]]:
    """(hand of player_0, hand of player_1, the public card to come, the rest)."""
    for first, second, public in permutations(CARDS, 3):
        rest = [c for c in CARDS if c not in (first, second, public)]
        yield first, second, public, rest


def positions(env: Any) -> Iterator[None]:
    """Put the reference into each start position in turn."""
    write_state = _bridge().write_state
    for index, (first, second, public, rest) in enumerate(_deals()):
        mover = index % 2
        chips = [BLINDS[1], BLINDS[1]]
        chips[mover] = BLINDS[0]
        write_state(env, _state(first, second, [*rest, public], -1, 0, mover, chips))
        yield
        level = 2 + 2 * (index % 3)  # a first round that ended level at 2, 4 or 6 chips
        write_state(env, _state(first, second, rest, public, 1, mover, [level, level]))
        yield


def _state(
    first: int,
    second: int,
    deck: list[int],
    public: int,
    round_counter: int,
    mover: int,
    chips: list[int],
) -> dict[str, Any]:
    return {
        "hand.player_0": first,
        "hand.player_1": second,
        "public_card": public,
        "deck": deck,
        "chips.player_0": chips[0],
        "chips.player_1": chips[1],
        "folded.player_0": False,
        "folded.player_1": False,
        "round.raised": list(chips) if round_counter == 0 else [0, 0],
        "round.have_raised": 0,
        "round.not_raise_num": 0,
        "round.raise_amount": RAISE * (1 + round_counter),
        "round_counter": round_counter,
        "game_pointer": mover,
        "current_player": mover,
        "rewards.player_0": 0.0,
        "rewards.player_1": 0.0,
    }
