"""Episodes that survive to the time limit, searched on the reference.

Reverse injection plays the port from its own start states, with no late starts: a
short-lived env (CartPole under the plan's policies ends within a few dozen steps) never
reaches its time limit, so a port whose limit is wrong passes (envpool's 200-step
CartPole-v0 behind the 500-step CartPole-v1 spec). The reference can load any state, so it
can look ahead: from each start, every step takes the action whose random continuations
survive longest, until the step that truncates. The port then plays those actions from
the same start (envport.verifiers.levels.reverse's `choose` hook), and its endings are compared
like any other episode's.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from envport.targets.reference import Reference, State
from envport.verifiers.draws.policies import uniform_actions

# Look-ahead per candidate action: this many random continuations of this many steps.
TRIES = 12
DEPTH = 20
# A dead end rewinds this many steps, twice as many the next time; the search stops after
# this many steps per step of the limit.
REWIND = 10
BUDGET_PER_STEP = 4
# Actions surviving at least this share of the best are near-ties, decided by distance.
NEAR_TIE = 0.9
# Candidate actions per step in a Box space (a Discrete space tries every action).
BOX_CANDIDATES = 5


def _candidates(space: spaces.Space, rng: np.random.Generator) -> list[Any]:
    if isinstance(space, spaces.Discrete):
        return list(int(space.start) + np.arange(int(space.n), dtype=np.int64))
    return list(uniform_actions(space, rng, BOX_CANDIDATES))


def _act(action: Any) -> Any:
    return action.item() if np.ndim(action) == 0 else action


def _continuation(reference: Reference, state: State, rng: np.random.Generator) -> int:
    """Steps a random continuation from `state` lasts before terminating (DEPTH if it
    does not, or if it reaches the limit first)."""
    reference.write_state(state)
    for step, action in enumerate(uniform_actions(reference.action_space, rng, DEPTH)):
        out = reference.step(_act(action))
        if out.truncated:
            return DEPTH
        if out.terminated:
            return step
    return DEPTH


def _distance(state: State, start: State) -> float:
    """How far `state` has moved from the episode's start, each field scaled by the start's
    own size: among actions that survive about as long, the one that stays near where
    episodes start (a cart drifting to its bound dies later than the look-ahead sees)."""
    total = 0.0
    for name, value in start.items():
        here, there = np.asarray(state[name], dtype=float), np.asarray(value, dtype=float)
        if here.shape == there.shape and there.dtype.kind == "f":
            total += float(np.sum((here - there) ** 2) / (1.0 + np.sum(there**2)))
    return total


def _best_step(
    reference: Reference, state: State, start: State, rng: np.random.Generator
) -> tuple[str, Any, State]:
    """("limit", action, _) when an action truncates here; ("step", action, next state) for
    the action whose continuations survive longest; ("dead", None, _) when every action
    ends the episode."""
    scored = []
    for action in _candidates(reference.action_space, rng):
        reference.write_state(state)
        try:
            out = reference.step(_act(action))
        except Exception:  # an action the reference refuses here is not a candidate
            continue
        if out.truncated:
            return "limit", action, state
        if out.terminated:
            continue
        after = reference.read_state()
        # Summed, not the best: the action most continuations survive, not one lucky one.
        score = 1 + sum(_continuation(reference, after, rng) for _ in range(TRIES))
        scored.append((score, action, after))
    if not scored:
        return "dead", None, state
    best = max(score for score, _, _ in scored)
    near = [entry for entry in scored if entry[0] >= NEAR_TIE * best]
    _, action, after = min(near, key=lambda entry: _distance(entry[2], start))
    return "step", action, after


def surviving_actions(
    reference: Reference, start: State, limit: int, seed: int
) -> list[Any] | None:
    """Actions that take the reference from `start` to the step that truncates it, or None
    when the search's budget ends first. A dead end rewinds the plan (further each time,
    with fresh draws): an episode is lost long before the step where it ends."""
    rng = np.random.default_rng(seed)
    plan: list[Any] = []
    states = [start]
    back, budget = REWIND, limit * BUDGET_PER_STEP
    while budget > 0:
        budget -= 1
        kind, action, after = _best_step(reference, states[-1], start, rng)
        if kind == "limit":
            return [*plan, action]
        if kind == "step":
            plan.append(action)
            states.append(after)
            continue
        keep = max(0, len(plan) - back)
        del plan[keep:], states[keep + 1 :]
        back *= 2
    return None


def to_the_limit(reference: Reference, limit: int, seed: int) -> Any:
    """A `choose` hook for reverse injection: the first episode whose start the search finds
    a way to the time limit from plays it; the others play their planned actions."""

    def choose(starts: list[State], planned: list[list[Any]]) -> list[list[Any]]:
        # One episode that reaches the limit shows it: the search stops at the first.
        found, reached = [], False
        for index, (start, actions) in enumerate(zip(starts, planned, strict=True)):
            survivor = None if reached else surviving_actions(reference, start, limit, seed + index)
            reached = reached or survivor is not None
            found.append(survivor if survivor is not None else actions)
        return found

    return choose
