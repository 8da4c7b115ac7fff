"""Start states the reference reaches itself, for L1's and L2's draws (`[state.reached]`).

Some state spaces no bounds describe: almost no assignment of pieces to a chess board's 64
squares is a position a game reaches (one king each, no pawn on a back rank, the side not to
move not in check, a history that leads there). A spec's `[state.reached]` has the
reference play `episodes` episodes, a game with the closed-loop players its L3 plays
(`legal`, `patient`, `greedy`), any other env with uniform and sticky random actions, and
L1 and L2 draw their start states from every state those episodes passed through (`share`
of the draws; the rest from the fields and bounds as before). A state's rules are then met
where play meets them; the levels still try every action from it, legal or not. The
episodes follow from the spec alone (not from --seed), and are played once per reference.

Each step of those episodes is kept whole (`reached_steps`: the state, the action played
from it and the reference's own answer), so L1's `reached` check (levels/l1/reached.py)
can put the port through every one of them without stepping the reference again.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from envport.spec import PortSpec
from envport.targets.reference import Reference, State, Transition
from envport.verifiers.draws.policies import plan_actions
from envport.verifiers.draws.turns import game_players, turn_actions

# The episodes' own stream, apart from every other one of a run.
_SALT = 0x4EAC


@dataclass(frozen=True)
class ReachedStep:
    """One step of a `[state.reached]` episode: the state before it, the action played and
    the reference's transition."""

    before: State
    action: Any
    transition: Transition


_PLAYED: weakref.WeakKeyDictionary[Reference, tuple[ReachedStep, ...]] = weakref.WeakKeyDictionary()


def _actions(spec: PortSpec, reference: Reference, episode: int, steps: int) -> Iterator[Any]:
    if spec.game is not None:
        players = game_players(spec.l3_policies)
        yield from turn_actions(players[episode % len(players)], reference, _SALT, episode, steps)
        return
    kind = ("uniform", "sticky")[episode % 2]
    yield from plan_actions(kind, reference.action_space, _SALT, episode, steps)


def reached_states(spec: PortSpec, reference: Reference) -> tuple[State, ...]:
    """Every state the reference passes through in the spec's `[state.reached]` episodes
    (none without it), each before a step was taken from it."""
    return tuple(step.before for step in reached_steps(spec, reference))


def reached_steps(spec: PortSpec, reference: Reference) -> tuple[ReachedStep, ...]:
    """Every step of the spec's `[state.reached]` episodes (none without it), in order;
    played once per reference."""
    config = spec.state.reached
    if config is None:
        return ()
    if reference in _PLAYED:
        return _PLAYED[reference]
    steps = spec.levels.l3.steps
    played: list[ReachedStep] = []
    for episode in range(config.episodes):
        reference.reset(_SALT + episode)
        for action in _actions(spec, reference, episode, steps):
            before = reference.read_state()
            outcome = reference.step(action)
            played.append(ReachedStep(before, action, outcome))
            if outcome.terminated or outcome.truncated:
                break
    _PLAYED[reference] = tuple(played)
    return _PLAYED[reference]
