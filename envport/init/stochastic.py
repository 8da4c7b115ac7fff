"""Randomness: whether what `step` draws from `np_random` changes its outcome, and, for a
step that picks one outcome of a transition table `P[s][a]` (the toy-text family) with one
uniform draw, the `[randomness]` table and its harness file.

A step may draw and ignore the draw (Taxi's deterministic table draws one number per step
from a one-outcome list): that is not randomness the port must reproduce. So the test is by
outcome: the same state and action, stepped with two different generators, must differ at
least once over the sampled states for the step to count as stochastic.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from envport.init.errors import InitError
from envport.init.state import same
from envport.init.watch import generators
from envport.targets.randomness import RecordingGenerator
from envport.targets.reference import Reference, State

HARNESS_FILE = "harness/noise.py"


@dataclass
class Randomness:
    categories: int
    probabilities: list[float]  # the full outcome list's, in the table's order
    field: str  # the state field indexing P
    methods: list[str]


def _outcome(ref: Reference, state: State, action: Any, seed: int) -> tuple[Any, ...]:
    ref.reset(seed=0)
    ref.write_state(state)
    base = ref.env.unwrapped
    base._np_random = RecordingGenerator(np.random.default_rng(seed))
    out = ref.step(action)
    return (out.obs, out.reward, out.terminated, out.truncated, ref.read_state(), base._np_random)


def stochastic(ref: Reference, samples: list[tuple[State, Any]]) -> list[str] | None:
    """The generator methods a step calls when its outcome depends on them, else None."""
    for state, action in samples:
        first = _outcome(ref, state, action, 1)
        for seed in (2, 3, 4):
            other = _outcome(ref, state, action, seed)
            if any(
                not (same(a, b) if not isinstance(a, dict) else all(same(a[k], b[k]) for k in a))
                for a, b in zip(first[:5], other[:5], strict=True)
            ):
                return [d.method for d in first[5].draws]
    return None


def table_randomness(ref: Reference, methods: list[str], index_fields: list[str]) -> Randomness:
    """The categorical noise of a transition-table step, or an InitError for any other
    stochastic step (its noise needs a hand-written harness). `index_fields`: the integer
    scalar state fields other than a step counter; the table is indexed by the only one."""
    hand = (
        f"`step` draws from np_random ({', '.join(methods) or 'no recorded method'}) and its "
        "outcome depends on the draws: write `[randomness]` and a harness file defining "
        "`noise_from_draws` by hand (docs/spec.md; examples/frozenlake)"
    )
    table = getattr(ref.env.unwrapped, "P", None)
    if methods != ["random"] or not isinstance(table, dict | list) or len(index_fields) != 1:
        raise InitError(hand)
    try:
        lists = [[t[0] for t in outcomes] for row in _rows(table) for outcomes in _rows(row)]
    except (TypeError, IndexError, KeyError):
        raise InitError(hand) from None
    longest = max(len(p) for p in lists)
    full = [p for p in lists if len(p) == longest]
    if longest < 2 or any(not np.allclose(p, full[0]) for p in full):
        raise InitError(hand)
    return Randomness(longest, [float(p) for p in full[0]], index_fields[0], methods)


def _rows(table: Any) -> list[Any]:
    return list(table.values()) if isinstance(table, dict) else list(table)


HARNESS = '''"""The reference's randomness as the port's noise (harness code by `envport init`).

The reference's step draws one uniform `u = np_random.random()` and takes outcome
`argmax(cumsum(p) > u)` of its transition table `P[{field}][a]`. The port's noise is that
outcome's index, 0..{last}, in the table's order, drawn with probabilities {probabilities}.
A state whose list is shorter (absorbing: one outcome whatever the draw) gets the index the
same `u` picks from the full list, so the noise has one distribution in every state and the
port's step ignores it there.
"""

import numpy as np

FULL = np.array({probabilities})


def noise_from_draws(draws, before, action, env):
    methods = [d.method for d in draws]
    if methods != ["random"]:
        raise ValueError(f"expected one np_random.random() per step, got {{methods}}")
    u = float(draws[0].value)
    outcomes = env.unwrapped.P[int(before["{field}"])][int(action)]
    probabilities = [t[0] for t in outcomes]
    if len(probabilities) != len(FULL):
        probabilities = FULL
    return np.int64(np.argmax(np.cumsum(probabilities) > u))
'''


def harness_text(randomness: Randomness) -> str:
    return HARNESS.format(
        field=randomness.field,
        last=randomness.categories - 1,
        probabilities=[round(p, 12) for p in randomness.probabilities],
    )


def _reseed(generator: Any, seed: int) -> None:
    """In place: the game may hold the generator under several names."""
    if isinstance(generator, np.random.RandomState):
        generator.seed(seed)
    else:
        generator.bit_generator.state = type(generator.bit_generator)(seed).state


def _own_outcome(ref: Reference, state: State, action: Any, seed: int) -> tuple[Any, ...]:
    ref.reset(seed=0)
    ref.write_state(state)
    for _, generator in generators(ref.env):
        _reseed(generator, seed)
    out = ref.step(action)
    return (out.obs, out.reward, out.terminated, out.truncated, ref.read_state())


def own_randomness(ref: Reference, samples: list[tuple[State, Any]], drawn: list[str]) -> None:
    """An InitError when a step's outcome depends on what it draws from a generator of the
    game's own (`drawn`: the paths of those that advanced under step), which no spec can
    infer: the port needs those draws as noise, through a harness written by hand."""
    for index, (state, action) in enumerate(samples):
        # Other seeds for every sample: a draw that matters one time in ten (a sticky
        # action) must get its chance.
        first = _own_outcome(ref, state, action, 4 * index)
        for seed in range(4 * index + 1, 4 * index + 4):
            other = _own_outcome(ref, state, action, seed)
            if any(
                not (same(a, b) if not isinstance(a, dict) else all(same(a[k], b[k]) for k in a))
                for a, b in zip(first, other, strict=True)
            ):
                raise InitError(
                    f"`step` draws from {', '.join(f'`{p}`' for p in drawn)} (the game's own "
                    "numpy generator, not Gymnasium's np_random) and its outcome depends on the "
                    f'draws: declare `[randomness] generator = "{drawn[0]}"` with a harness '
                    "mapping its draws to the port's noise (docs/spec.md; "
                    "examples/minatar_freeway), or turn the randomness off in `kwargs` "
                    "(MinAtar: sticky_action_prob = 0)"
                )
