"""l2.reset_after_play: a reset that follows an episode keeps what the reference keeps.

l2.reset compares the port's resets with fresh ones, and every other check starts from an
injected state, so a reference that carries something through `reset()` (MinAtar's sticky
`last_action`: the first step of a new episode may repeat the last action of the one
before) passed against a port that starts each episode clean. Here:

1. The reference plays PLAYS short episodes from seeded resets (random actions, each play
   of its own length, stopping at the episode's end), and after each is reset with one
   seed, RESET_SEED apart from the plays' (`reset(seed=s)`, as a user resets after play).
2. What the reference keeps is measured, not declared: a component of the state or of the
   observation is kept when its value after the reset differs between plays although the
   seed is the same, and the same played state reset again with the same seed gives the
   same value (a reset that draws from a stream the seed does not set is not "kept").
3. The port loads each played state and resets after it (envport.targets.carry: a NumPy
   VectorEnv's `reset(seed)`, a JAX port's `reset_after`, or its `reset` when it has none),
   and every kept component must equal the reference's, exactly up to the field's
   tolerance. Components the reset draws afresh stay l2.reset's, compared in distribution.

A NumPy VectorEnv's autoreset keeps them too: l2.vector holds each autoreset to the
reference's own reset of the same env (envport.verifiers.stats.reset_sample.DrawSupport).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from envport.gaps import Gap, GapKind
from envport.serve.ops import ResetAfter
from envport.spec import PortSpec
from envport.structure import canonical
from envport.targets.reference import Reference, State
from envport.verifiers.reporting.divergence import Divergence, FieldDiff, LevelResult
from envport.verifiers.reporting.states import stack_states
from envport.verifiers.stats import sample_compare

# Enough plays that a kept value (one of MinAtar's five or six actions) varies between them.
PLAYS = 16
# Each play's length is drawn from 1..MAX_STEPS (an episode that ends sooner stops there).
MAX_STEPS = 40
RESET_SEED = 4_810_000


class Played:
    """The reference's side: the states its plays ended in, the reset after each, and the
    components those resets kept."""

    def __init__(self, spec: PortSpec, reference: Reference, seed: int) -> None:
        self.spec = spec
        self.seed = seed * 7_919 + RESET_SEED
        self.ended: list[State] = []
        self.actions: list[list[Any]] = []
        obs, after, again, again_obs = [], [], [], []
        for play in range(PLAYS):
            ended, actions = _play(reference, self.seed + 1 + play)
            self.ended.append(ended)
            self.actions.append(actions)
            obs.append(reference.reset(self.seed))
            after.append(reference.read_state())
            reference.write_state(ended)  # the same end, reset again with the same seed
            again_obs.append(reference.reset(self.seed))
            again.append(reference.read_state())
        self.obs = _components(spec, np.stack(obs), stack_states(after))
        repeat = _components(spec, np.stack(again_obs), stack_states(again))
        self.kept = [
            name
            for name, values in self.obs.items()
            if np.array_equal(values, repeat[name], equal_nan=True)
            and not np.all(values == values[0])
        ]


def check_reset_after_play(
    spec: PortSpec, reference: Reference, worker: Any, seed: int, replay: str
) -> LevelResult:
    started = time.perf_counter()
    level = LevelResult(level="l2", mode="reset_after_play", passed=True, episodes=PLAYS)
    played = Played(spec, reference, seed)
    level.steps_compared = PLAYS
    if not played.kept:
        level.note = (
            f"{PLAYS} resets after play, seeded alike: the reference keeps nothing across "
            "reset() (what it draws afresh is l2.reset's)"
        )
        level.seconds = {"total": time.perf_counter() - started}
        return level
    answer = worker.request(ResetAfter(states=stack_states(played.ended), seed=played.seed))
    readable = answer["state"] is not None
    port = _components(spec, np.asarray(answer["obs"]), answer["state"] if readable else None)
    how = f"the port's {answer['call']}"
    compared = [name for name in played.kept if name in port]
    for play in range(PLAYS):
        fields = _differences(spec, played, port, compared, play)
        if fields:
            level.divergences.append(_divergence(played, play, fields, how, seed, replay))
            break
    level.passed = not level.divergences
    level.diverged_episodes = len(level.divergences)
    level.note = (
        f"{PLAYS} resets after play: the reference keeps {', '.join(played.kept)} across "
        f"reset(); compared exactly after {how}"
    )
    if level.divergences:
        level.note = level.divergences[0].message
    unread = [name for name in played.kept if name not in port]
    if unread and not readable:
        level.gaps.append(
            Gap(
                check="l2.reset_after_play",
                kind=GapKind.NO_STATE_READS,
                detail=f"the port has no `state_to_reference`, so what the reference keeps "
                f"across reset() ({', '.join(unread)}) is not compared",
            )
        )
    level.seconds = {"total": time.perf_counter() - started}
    return level


def _play(reference: Reference, seed: int) -> tuple[State, list[Any]]:
    """One short episode from reset(seed) with random actions; the state it ended in."""
    reference.reset(seed)
    space = reference.action_space
    space.seed(seed)
    length = int(np.random.default_rng(seed).integers(1, MAX_STEPS + 1))
    actions: list[Any] = []
    for _ in range(length):
        action = space.sample()
        actions.append(np.asarray(action).tolist())
        outcome = reference.step(action)
        if outcome.terminated or outcome.truncated:
            break
    return reference.read_state(), actions


def _components(spec: PortSpec, obs: np.ndarray, states: dict | None) -> dict[str, np.ndarray]:
    found = sample_compare.columns("obs", obs, spec)
    if states is not None:
        rows = {k: np.asarray(v) for k, v in states.items()}
        found |= sample_compare.columns("state", canonical(spec.state, rows), spec)
    return {k: np.asarray(v, dtype=np.float64) for k, v in found.items()}


def _differences(
    spec: PortSpec, played: Played, port: dict[str, np.ndarray], names: list[str], play: int
) -> list[FieldDiff]:
    diffs = []
    for name in names:
        want, got = played.obs[name][play], port[name][play]
        atol, rtol = sample_compare.tolerance(spec, name)
        if not abs(got - want) <= atol + rtol * abs(want):
            diffs.append(FieldDiff(field=name, expected=_number(want), actual=_number(got)))
    return diffs


def _number(value: float) -> float | int:
    return int(value) if float(value).is_integer() else float(value)


def _divergence(
    played: Played, play: int, fields: list[FieldDiff], how: str, seed: int, replay: str
) -> Divergence:
    first = fields[0]
    return Divergence(
        level="l2",
        mode="reset_after_play",
        seed=seed,
        reset_seed=played.seed,
        start_state={k: np.asarray(v).tolist() for k, v in played.ended[play].items()},
        action_prefix=played.actions[play],
        fields=fields,
        message=(
            f"{first.field}: expected {first.expected}, got {first.actual} after {how}: the "
            f"reference keeps it from the episode before (play {play}: reset(seed="
            f"{played.seed + 1 + play}), {len(played.actions[play])} random actions, then "
            f"reset(seed={played.seed}))"
        ),
        replay=replay,
    )
