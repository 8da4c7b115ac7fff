"""A spec's book of start states, expanded on the reference (`[state.reached] book`).

Play meets some rules almost never: a chess en passant capture that would leave the king on
an open rank turned up in none of 34,000 positions of random games. Whoever writes a spec
often knows the positions where such rules decide (chess has its perft suite, positions
move generators are tested on). `book` names a generator that puts the reference env into
each of them in turn (through the state bridge) and yields; from each start, every action
(a game's legal moves; every action of a small discrete space) is played, and from each
position reached so, again, `depth` plies in all: every line of that depth, as perft
counts them. Each step is kept as one of the `[state.reached]` steps: L1's `reached`
check puts the port through all of them, and L1 and L2 draw start states from them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from gymnasium import spaces

from envport.spec import PortSpec
from envport.targets.reference import Reference, State, Transition, import_attr

# A discrete space up to this many actions has each tried from a book position (a game's
# legal moves are tried whatever their number); a larger or continuous one has none.
EVERY_ACTION = 64


def book_starts(spec: PortSpec, reference: Reference) -> list[State]:
    """The book's start states, read through the bridge (none without a book)."""
    config = spec.state.reached
    if config is None or config.book is None:
        return []
    positions: Callable[..., Iterator[object]] = import_attr(
        config.book, "state.reached.book", spec
    )
    reference.reset(None)
    return [reference.read_state() for _ in positions(reference.env)]


def _actions(reference: Reference) -> list[int]:
    legal = reference.legal_actions()
    if legal is not None:
        return list(legal)
    space = reference.action_space
    if isinstance(space, spaces.Discrete) and int(space.n) <= EVERY_ACTION:
        return [int(space.start) + a for a in range(int(space.n))]
    return []


def expanded(
    reference: Reference, start: State, depth: int
) -> Iterator[tuple[State, int, Transition]]:
    """Every line of `depth` actions from `start` on the reference, step by step: the state
    before each, the action, the transition (a line ends where an episode does)."""
    frontier = [start]
    for ply in range(depth):
        following = []
        for before in frontier:
            reference.write_state(before)
            for action in _actions(reference):
                reference.write_state(before)
                outcome = reference.step(action)
                yield before, action, outcome
                if ply + 1 < depth and not (outcome.terminated or outcome.truncated):
                    following.append(reference.read_state())
        frontier = following
