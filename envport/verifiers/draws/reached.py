"""Start states the reference reaches itself, for L1's and L2's draws (`[state.reached]`).

Some state spaces no bounds describe: almost no assignment of pieces to a chess board's 64
squares is a position a game reaches (one king each, no pawn on a back rank, the side not to
move not in check, a history that leads there). A spec's `[state.reached]` has the
reference play `episodes` episodes, a game with the closed-loop players its L3 plays
(`legal`, `patient`, `greedy`), any other env with uniform and sticky random actions, and
L1 and L2 draw their start states from every state those episodes passed through (`share`
of the draws; the rest from the fields and bounds as before). A state's rules are then met
where play meets them; the levels still try every action from it, legal or not. The
episodes follow from the spec alone (not from --seed), and are played once per spec in a
process, and kept on disk by what they follow from (draws/reached_cache.py), so the next
verify of the same reference loads them.

A spec's `book` adds start states where rare rules decide, every line `depth` actions deep
played from each (draws/book.py); their steps join the episodes'. Each step is kept whole
(`reached_steps`: the state, the action played from it and the reference's own answer),
so L1's `reached` check (levels/l1/reached.py) can put the port through every one of them
without stepping the reference again.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, overload

import numpy as np

from envport.spec import PortSpec
from envport.targets.reference import Reference, State, Transition
from envport.verifiers.coverage import branches
from envport.verifiers.draws import reached_cache
from envport.verifiers.draws.book import book_starts, expanded
from envport.verifiers.draws.policies import plan_actions
from envport.verifiers.draws.turns import game_players, turn_actions

# The episodes' own stream, apart from every other one of a run.
_SALT = 0x4EAC


@dataclass(frozen=True)
class ReachedStep:
    """One step of a `[state.reached]` episode: the state before it, the action played and
    the reference's transition. Kept narrow (`_narrow`): thousands are held at once."""

    kept: State
    types: dict[str, np.dtype]
    action: Any
    outcome: Transition
    obs_type: np.dtype

    @classmethod
    def of(cls, before: State, action: Any, transition: Transition) -> ReachedStep:
        obs = np.asarray(transition.obs)
        return cls(
            {k: _narrow(v) for k, v in before.items()},
            {k: np.asarray(v).dtype for k, v in before.items()},
            action,
            replace(transition, obs=_narrow(obs)),
            obs.dtype,
        )

    @property
    def before(self) -> State:
        return {k: v.astype(self.types[k]) for k, v in self.kept.items()}

    @property
    def transition(self) -> Transition:
        return replace(self.outcome, obs=self.outcome.obs.astype(self.obs_type))


def _narrow(value: Any) -> np.ndarray:
    """The same integers in the narrowest type holding them: a chess position's leaves are
    int64 for values below 16, 155 kB a step as read, 25 kB narrowed."""
    value = np.asarray(value)
    if value.dtype.kind not in "biu" or value.size == 0:
        return value
    for narrow in (np.int8, np.int16, np.int32):
        info = np.iinfo(narrow)
        if info.min <= value.min() and value.max() <= info.max:
            return value.astype(narrow)
    return value


def _actions(spec: PortSpec, reference: Reference, episode: int, steps: int) -> Iterator[Any]:
    if spec.game is not None:
        players = game_players(spec.l3_policies)
        yield from turn_actions(players[episode % len(players)], reference, _SALT, episode, steps)
        return
    kind = ("uniform", "sticky")[episode % 2]
    yield from plan_actions(kind, reference.action_space, _SALT, episode, steps)


# The last spec's episodes, by what they follow from (the spec and its folders): they are
# the same for every reference of it, so a process verifying one example again and again
# (mutants, tests) plays them once. One kept: a chess example's are 100 MB.
_PLAYED: dict[str, tuple[ReachedStep, ...]] = {}


def _key(spec: PortSpec) -> str:
    return f"{[str(folder) for folder in spec.folders]} {spec.model_dump_json()}"


class ReachedStates(Sequence[State]):
    """The states before each step, widened back to the types they were read in as each is
    taken: L1 and L2 draw a few of thousands."""

    def __init__(self, steps: tuple[ReachedStep, ...]) -> None:
        self.steps = steps

    def __len__(self) -> int:
        return len(self.steps)

    @overload
    def __getitem__(self, index: int) -> State: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[State]: ...
    def __getitem__(self, index: int | slice) -> State | Sequence[State]:
        if isinstance(index, slice):
            return [step.before for step in self.steps[index]]
        return self.steps[index].before


def reached_states(spec: PortSpec, reference: Reference) -> Sequence[State]:
    """Every state the reference passes through in the spec's `[state.reached]` episodes
    (none without it), each before a step was taken from it."""
    steps = reached_steps(spec, reference)
    return ReachedStates(steps) if steps else ()


def reached_steps(spec: PortSpec, reference: Reference) -> tuple[ReachedStep, ...]:
    """Every step of the spec's `[state.reached]` episodes (none without it), in order;
    played once per spec in a process."""
    config = spec.state.reached
    if config is None:
        return ()
    key = _key(spec)
    if key in _PLAYED:
        return _PLAYED[key]
    kept_as = reached_cache.key(spec)
    kept = reached_cache.load(kept_as) if kept_as else None
    measure = branches.current()
    if _usable(kept, measure):
        assert isinstance(kept, KeptPlay)
        if measure is not None and kept.arcs:
            # What the reference's play took when it ran, taken again: a verify that loads
            # the play covers what one that played it did (Texas hold'em's rare showdowns).
            measure.add(measure.context, kept.arcs)
        _PLAYED.clear()
        _PLAYED[key] = kept.steps
        return kept.steps
    taken_before = measure.executed() if measure is not None else None
    steps = config.steps or spec.levels.l3.steps
    played: list[ReachedStep] = []
    for episode in range(config.episodes):
        reference.reset(_SALT + episode)
        for action in _actions(spec, reference, episode, steps):
            before = reference.read_state()
            outcome = reference.step(action)
            played.append(ReachedStep.of(before, action, outcome))
            if outcome.terminated or outcome.truncated:
                break
    for start in book_starts(spec, reference):
        for before, action, outcome in expanded(reference, start, config.depth):
            played.append(ReachedStep.of(before, action, outcome))
    _PLAYED.clear()
    _PLAYED[key] = tuple(played)
    if kept_as:
        arcs = None
        if measure is not None and taken_before is not None:
            arcs = branches.taken_since(taken_before, measure.executed())
        reached_cache.store(kept_as, KeptPlay(_PLAYED[key], arcs))
    return _PLAYED[key]


@dataclass(frozen=True)
class KeptPlay:
    """The play as kept on disk: its steps, and the reference's branch arcs it took first
    (None when no measure ran: a verify that measures plays it again)."""

    steps: tuple[ReachedStep, ...]
    arcs: dict[str, list[tuple[int, int]]] | None


def _usable(kept: Any, measure: branches.Measure | None) -> bool:
    if not isinstance(kept, KeptPlay):
        return False
    if not all(isinstance(step, ReachedStep) for step in kept.steps):
        return False
    return measure is None or kept.arcs is not None
