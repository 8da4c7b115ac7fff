"""A turn-based game's players for L3: closed loop, since which moves are legal depends on
the position (docs/verification.md, Two-player games).

- `legal`: uniform over the legal moves of the player to move;
- `greedy`: a move that wins at once when there is one (found by trying each legal move on
  the reference and putting the position back), else uniform over the legal moves;
- `patient`: uniform over the legal moves that neither end the game nor leave the opponent
  a move that does, else over those that do not end it, else over all: its games run long,
  to where a game's draw rules live (a full Connect Four board ends about one game in seven
  of these, one in fifteen when only the player's own move is looked at, next to none of
  uniform play).

The open-loop policies (`uniform`, `sticky`, `biased`) still play a game: their moves ignore
legality, so a full column or an occupied square is tried and the reference's rule for an
illegal move is in play. Each episode's moves follow from (seed, episode index) and the
positions, which the reference alone decides: the replay command reproduces them.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from envport.targets.reference import Reference

TURN_POLICIES = ("legal", "greedy", "patient")
# The order in which checks that play games of their own take the players, game by game.
PLAYING_ORDER = ("legal", "patient", "greedy")


def game_players(policies: list[str]) -> tuple[str, ...]:
    """The closed-loop players among a spec's L3 policies, in PLAYING_ORDER (`legal` when
    it names none): a spec leaves out a player too slow for its game (chess's `patient`
    looks at every reply to every move)."""
    return tuple(p for p in PLAYING_ORDER if p in policies) or ("legal",)


# The generator's tag for these players' draws, apart from every other stream of a run.
_STREAM = 0x7A2E


def turn_actions(
    kind: str, reference: Reference, seed: int, index: int, steps: int
) -> Iterator[int]:
    rng = np.random.default_rng([seed, index, _STREAM])
    for _ in range(steps):
        legal = reference.legal_actions()
        if not legal:
            return  # not a game, or no move left: the episode ends here
        if kind == "greedy":
            winning = [a for a in legal if _wins(reference, a)]
            legal = winning or legal
        elif kind == "patient":
            going_on = [a for a in legal if not _ends(reference, a)]
            safe = [a for a in going_on if _safe(reference, a)]
            legal = safe or going_on or legal
        yield legal[int(rng.integers(len(legal)))]


def _wins(reference: Reference, action: int) -> bool:
    """Whether `action` ends the game with the mover ahead of every other player."""
    mover = int(reference.env.current_player())
    outcome = reference.try_action(action)
    rewards = np.asarray(outcome.reward, dtype=float)
    others = np.delete(rewards, mover)
    return bool(outcome.terminated and rewards[mover] > others.max(initial=-np.inf))


def _ends(reference: Reference, action: int) -> bool:
    outcome = reference.try_action(action)
    return bool(outcome.terminated or outcome.truncated)


def _safe(reference: Reference, action: int) -> bool:
    """Whether after `action` (which does not end the game) no reply ends it."""
    state = reference.read_state()
    reference.step(action)
    replies = reference.legal_actions() or []
    safe = not any(_ends(reference, reply) for reply in replies)
    reference.write_state(state)
    return safe
