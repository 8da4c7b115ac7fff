"""The inference, phase by phase: entry and sources, state fields, reachable states, the
round trip, randomness, chaos. Each phase says one line on stderr; the result is data
(`Inference`) that `render` turns into the spec's text."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from envport.init.chaos import Chaos, horizon, measure
from envport.init.entry import EnvEntry
from envport.init.episodes import NATURAL_CAP, Natural, ResetDraws, reset_draws
from envport.init.errors import InitError
from envport.init.explore import Budget, Visits, counter_field, explore
from envport.init.meaning import Meaning, meanings
from envport.init.obsnames import observation_names
from envport.init.policies import mix
from envport.init.roundtrip import RoundTrip, prove
from envport.init.sources import infer_sources
from envport.init.state import Discovery, discover
from envport.init.stochastic import Randomness, own_randomness, stochastic, table_randomness
from envport.init.watch import objects
from envport.io import inert
from envport.spec import PortSpec, ReferenceSpec, StateSpec
from envport.targets.reference import Reference
from envport.targets.simultaneous import is_parallel
from envport.targets.turns import is_aec

# Float state is compared as the examples compare a float32 port of a float64 reference.
FLOAT_ATOL = 1e-5
FREE_TOL = 1e-4


@dataclass
class Inference:
    entry: EnvEntry
    env: Any
    sources: list[str]
    discovery: Discovery
    fields: dict[str, str]  # name -> attribute path on the env `make` returns
    integer: dict[str, bool]
    limit: int | None  # the registry's max_episode_steps
    natural: Natural | None  # with no time limit: how long episodes ran on their own
    reset: ResetDraws | None
    counter: str | None
    visits: Visits
    round_trip: RoundTrip
    randomness: Randomness | None
    chaos: Chaos | None
    obs_names: list[str]
    obs_how: str
    obs_float: bool
    seconds: float
    # What each field's values mean, where the reference's source says (meaning.py).
    meanings: dict[str, Meaning] = field(default_factory=dict)

    @property
    def free_horizon(self) -> int | None:
        return None if self.chaos is None else horizon(self.chaos)

    @property
    def steps(self) -> int:
        """L3's episode length: the time limit, else what play showed of natural episodes."""
        if self.limit:
            return self.limit
        assert self.natural is not None
        return self.natural.steps


def say(text: str) -> None:
    inert.say(f"envport init: {text}")


def _paths(discovery: Discovery, probe: Any, real: Any) -> dict[str, str]:
    """Field paths on the env the verifier makes: a wrapper's attribute is found on the
    wrapper of the same class there (the env checker, left out of the probe, shifts none
    of the outer wrappers, but a factory's chain is its own)."""
    probe_links = {prefix: type(obj) for prefix, obj in objects(probe)}
    real_links = [(prefix, type(obj)) for prefix, obj in objects(real)]
    found: dict[str, str] = {}
    for f in discovery.fields:
        prefix, _, attr = f.path.rpartition(".")
        prefix = f"{prefix}." if prefix else ""
        if prefix == "unwrapped.":
            found[f.name] = f.path
            continue
        owner = probe_links[prefix]
        real_prefix = next((p for p, cls in real_links if cls is owner), prefix)
        found[f.name] = f"{real_prefix}{attr}"
    return found


def _discovery_actions(space: Any, episodes: int, steps: int) -> list[list[Any]]:
    rng = np.random.default_rng(3)
    plays = []
    for episode in range(episodes):
        _, policy = mix(space, episode)
        plays.append([policy(rng) for _ in range(steps)])
    return plays


def turn_based_limits(name: str, env: Any) -> str:
    """What init can say of a PettingZoo AEC env, and why it stops there."""
    agents = list(env.possible_agents)
    space = env.action_space(agents[0])
    actions = getattr(space, "n", None)
    return (
        f"{name}: a PettingZoo AEC env (players {', '.join(agents)}, {actions} actions): "
        "a two-player spec needs a state bridge init cannot infer (which positions may be "
        "drawn, how a position is written back between turns); write `[game] players = "
        f"{agents}`, `actions = {actions}` and a bridge as examples/connect_four does "
        "(docs/your-env.md, Two-player games)"
    )


def _space_text(space: Any) -> str:
    shape = getattr(space, "shape", None)
    if hasattr(space, "n"):
        return f"Discrete({int(space.n)})"
    dtype = getattr(space, "dtype", None)
    return f"{dtype}{list(shape or ())}" if dtype is not None else str(space)


def parallel_limits(name: str, env: Any) -> str:
    """What init can say of a PettingZoo Parallel env (its agents and their spaces, what the
    spec's `[parallel]` table holds), and the bridge it stops at."""
    agents = list(env.possible_agents)
    spaces = {
        agent: (_space_text(env.action_space(agent)), _space_text(env.observation_space(agent)))
        for agent in agents
    }
    kinds = sorted(set(spaces.values()))
    each = (
        f"actions {kinds[0][0]}, observations {kinds[0][1]} each"
        if len(kinds) == 1
        else "; ".join(f"{a}: actions {x}, observations {o}" for a, (x, o) in spaces.items())
    )
    # Flat observations of different lengths are stacked padded to the longest, each
    # length declared (docs/spec.md, Agents moving at once), as simple_tag's are.
    shapes: list[tuple[int, ...]] = [
        tuple(getattr(env.observation_space(agent), "shape", None) or ()) for agent in agents
    ]
    sizes = (
        f" and `observation_sizes = {[int(shape[0]) for shape in shapes]}`"
        if len(set(shapes)) > 1 and all(len(shape) == 1 for shape in shapes)
        else ""
    )
    example = "examples/mpe_simple_tag" if sizes else "examples/mpe_simple_spread"
    return (
        f"{name}: a PettingZoo Parallel env (agents {', '.join(agents)}; {each}): write "
        f"`[parallel] agents = {agents}`{sizes} and a state bridge (`state.read`/`state.write`: "
        "each agent's and entity's arrays and the step counter, ending with "
        "envport.targets.simultaneous.fresh_cycle), which init cannot infer from a world of "
        f"objects, as {example} does (docs/your-env.md, Agents moving at once)"
    )


def infer(entry: EnvEntry, budget: Budget) -> Inference:
    began = time.monotonic()
    say(f"{entry.entry}: reading the env's source")
    probe = entry.make(checker=False)
    if is_aec(probe):
        raise InitError(turn_based_limits(entry.entry, probe))
    if is_parallel(probe):
        raise InitError(parallel_limits(entry.entry, probe))
    sources = infer_sources(probe)
    limit = getattr(probe.spec, "max_episode_steps", None) if probe.spec else None
    # With no time limit, episodes are played to their own end (up to a cap): a rule that
    # acts late in a long episode is state and bounds too.
    cap = limit or NATURAL_CAP
    episodes = max(6, budget.episodes // 10)
    say(f"finding state: {episodes} episodes, attribute reads and changes under step")
    discovery = discover(
        probe,
        _discovery_actions(probe.action_space, episodes, min(cap, budget.steps // episodes)),
        list(range(episodes)),
    )
    real = entry.make()
    fields = _paths(discovery, probe, real)
    spec = PortSpec(
        name=entry.name,
        reference=ReferenceSpec(entry=entry.entry, kwargs=entry.kwargs, sources=sources),
        state=StateSpec(fields=fields),
    )
    ref, fresh = Reference(spec), Reference(spec)
    say(f"playing up to {budget.episodes} episodes (uniform, sticky, biased) for bounds")
    visits = explore(ref, budget, cap)
    counter = counter_field(visits, limit)
    natural = None if limit else Natural(tuple(visits.lengths), visits.cut, cap)
    if natural is not None:
        say(natural.summary())
    reset = reset_draws(visits.starts)
    if reset is not None:
        say(reset.summary())
    steps = limit or (natural.steps if natural else cap)
    say(f"round trip: {budget.starts} written start states into a fresh env")
    _, policy = mix(ref.action_space, 0)
    trip = prove(ref, fresh, policy, budget.starts, 20, steps)
    integer = {f.name: f.integer for f in discovery.fields}
    randomness = None
    if visits.own_draws:
        drawn = sorted(visits.own_draws)
        say(f"step draws from {', '.join(drawn)}: testing whether its outcome depends on them")
        own_randomness(fresh, visits.samples, drawn)
    if visits.draws:
        say("step draws from np_random: testing whether its outcome depends on the draws")
        methods = stochastic(fresh, visits.samples)
        if methods is not None:
            index = [
                n
                for n, i in integer.items()
                if i and n != counter and not np.shape(visits.live[n][0])
            ]
            randomness = table_randomness(fresh, methods, index)
    chaos = None
    if not all(integer.values()):
        say(f"chaos: {budget.chaos} free-running pairs, float64 against float32-rounded")
        chaos = measure(
            ref,
            fresh,
            budget.chaos,
            min(steps, budget.steps // max(1, budget.chaos)),
            FREE_TOL,
            FREE_TOL,
        )
    names, how = observation_names(probe, tuple(probe.observation_space.shape or ()))
    obs_float = np.dtype(probe.observation_space.dtype or np.int64).kind == "f"
    return Inference(
        entry,
        probe,
        sources,
        discovery,
        fields,
        integer,
        limit,
        natural,
        reset,
        counter,
        visits,
        trip,
        randomness,
        chaos,
        names,
        how,
        obs_float,
        time.monotonic() - began,
        meanings(probe, discovery.fields, visits.obs_is),
    )
