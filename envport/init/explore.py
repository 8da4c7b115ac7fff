"""Reachable states: many episodes of the reference under uniform, sticky and biased
policies, read through the verifier's own harness. What they visit gives the bounds, the
reward's kind, which fields are the observation, and whether `step` draws randomness."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from envport.init.policies import mix
from envport.init.watch import generator_state, generators
from envport.targets.reference import Reference, State


@dataclass
class Budget:
    """How much to play: episodes (the policies in turn) and a cap on all their steps."""

    episodes: int = 150
    steps: int = 60_000
    starts: int = 60  # round-trip start states
    chaos: int = 30  # free-running episode pairs for the chaos horizon


@dataclass
class Visits:
    live: dict[str, list[np.ndarray]]  # per field: the states episodes stepped from
    episodes: dict[str, int] = field(default_factory=dict)  # per policy kind
    rewards: list[float] = field(default_factory=list)
    draws: int = 0  # steps that advanced the env's generator
    own_draws: dict[str, int] = field(default_factory=dict)  # a game's own generators: steps
    obs_is: dict[str, bool] = field(default_factory=dict)  # field equals the observation
    samples: list[tuple[State, Any]] = field(default_factory=list)  # (state, action) pairs
    starts: list[State] = field(default_factory=list)  # each episode's start (seed = episode)
    lengths: list[int] = field(default_factory=list)  # episodes that ended on their own
    cut: int = 0  # episodes still running at the cap

    @property
    def states(self) -> int:
        return len(next(iter(self.live.values()), []))


def _generator_state(ref: Reference) -> Any:
    generator = getattr(ref.env.unwrapped, "_np_random", None)
    return generator.bit_generator.state if isinstance(generator, np.random.Generator) else None


def _own_states(ref: Reference) -> dict[str, Any]:
    """The states of the game's own generators (see watch.generators), by path."""
    return {path: generator_state(g) for path, g in generators(ref.env)}


def explore(ref: Reference, budget: Budget, limit: int) -> Visits:
    """Play `budget.episodes` episodes of at most `limit` steps (fewer once the step cap is
    spent)."""
    visits = Visits(live={name: [] for name in ref.spec.state.fields})
    obs_match = {name: True for name in ref.spec.state.fields}
    rng = np.random.default_rng(7)
    played = 0
    for episode in range(budget.episodes):
        if played >= budget.steps:
            break
        kind, policy = mix(ref.action_space, episode)
        visits.episodes[kind] = visits.episodes.get(kind, 0) + 1
        obs = ref.reset(seed=episode)
        ended = False
        for step in range(limit):
            state = ref.read_state()
            if step == 0:
                visits.starts.append(state)
            for name, value in state.items():
                visits.live[name].append(value)
                # The observation, in the observation's own dtype (a float64 state is
                # observed rounded to float32).
                if obs_match[name] and (
                    value.shape != obs.shape or not np.array_equal(value.astype(obs.dtype), obs)
                ):
                    obs_match[name] = False
            action = policy(rng)
            if len(visits.samples) < 400 and rng.random() < 0.05:
                visits.samples.append((state, action))
            before, own = _generator_state(ref), _own_states(ref)
            out = ref.step(action)
            played += 1
            if before is not None and _generator_state(ref) != before:
                visits.draws += 1
            for path, after in _own_states(ref).items():
                if path in own and after != own[path]:
                    visits.own_draws[path] = visits.own_draws.get(path, 0) + 1
            visits.rewards.append(out.reward)
            obs = out.obs
            if out.terminated or out.truncated:
                visits.lengths.append(step + 1)
                ended = True
                break
        if not ended:  # played to the cap
            visits.cut += 1
    visits.obs_is = obs_match
    return visits


def counter_field(visits: Visits, limit: int | None) -> str | None:
    """The integer scalar field that starts at 0 and counts steps (a time limit's)."""
    if limit is None:
        return None
    for name, values in visits.live.items():
        series = np.asarray(values)
        if series.ndim == 1 and series.dtype.kind in "iu" and series.min() == 0:
            steps = np.diff(series)
            # +1 every step, back to 0 at a new episode.
            if np.all((steps == 1) | (series[1:] == 0)):
                return name
    return None
