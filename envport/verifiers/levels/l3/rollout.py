"""L3 rollout checks: episodes from matched initial states, every step compared.

The reference plays each episode (its state read before every step). The port then
replays the same actions from the injected start state in one batched request
(free-running), and, in resync mode, takes one step from every recorded reference state
(state re-injected each step), so a single-step bug is told apart from accumulated drift.
This module plays, builds the requests and judges; `lanes.py` overlaps them in chunks.
"""

from __future__ import annotations

import contextlib
import gc
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

from envport.errors import PortError
from envport.serve.ops import Rollout, StepBatch
from envport.spec import PortSpec
from envport.targets.reference import Reference, State, import_attr
from envport.verifiers.draws.action_range import action_range
from envport.verifiers.draws.policies import EpisodePlan, Planner
from envport.verifiers.draws.turns import TURN_POLICIES, turn_actions
from envport.verifiers.levels.l3.left import earliest, state_divergences
from envport.verifiers.levels.l3.played import Played
from envport.verifiers.options import L3Options
from envport.verifiers.reporting.compare import Steps, contract_problems, divergent_steps
from envport.verifiers.reporting.divergence import Divergence, LevelResult
from envport.verifiers.reporting.replay import Replay
from envport.verifiers.reporting.series import field_series
from envport.verifiers.reporting.states import stack_states

# Divergences kept per level: the first few tell the story; the count tells the extent.
KEEP_DIVERGENCES = 5


def episode_indices(options: L3Options) -> list[int]:
    if options.only_episode is not None:
        return [options.only_episode]
    if options.batch is not None:
        return list(range(options.batch[0], options.batch[1] + 1))
    return list(range(options.episodes))


def play_reference(
    reference: Reference,
    spec: PortSpec,
    options: L3Options,
    indices: list[int] | None = None,
    between: Callable[[], None] | None = None,
) -> Played:
    """Play the episodes on the reference; `between` runs after each one (the L3 pipeline
    uses it to keep the port worker fed while the reference plays)."""
    config = spec.levels.l3
    counter = spec.state.step_counter
    indices = episode_indices(options) if indices is None else indices
    levels = spec.levels
    own = import_attr(config.policy, "levels.l3.policy", spec) if config.policy else None
    planner = Planner(
        options.seed,
        [*spec.l3_policies, OWN] if own is not None else spec.l3_policies,
        config.late_start_fraction,
        reference.max_episode_steps if counter else None,
        # A share of steps outside the action space, where the reference accepts them.
        action_range(reference, levels.out_of_range, levels.out_of_range_share),
    )
    plans, lengths = [], []
    record = _Record()
    # Nothing made here is cyclic garbage, and collecting while thousands of small arrays
    # pile up costs as much as a fifth of the play.
    with _collector_paused():
        for index in indices:
            plan = planner.plan(index)
            plans.append(plan)
            if plan.policy == OWN:
                actions = _own_actions(own, reference, options.seed, index, options.steps)
            elif plan.policy in TURN_POLICIES:
                actions = turn_actions(plan.policy, reference, options.seed, index, options.steps)
            else:
                actions = planner.actions(plan.policy, reference.action_space, index, options.steps)
            lengths.append(_play(reference, plan, actions, counter, record))
            if between is not None:
                between()
        return record.played(plans, lengths)


# The plan's name for the spec's own policy (`[levels.l3] policy`), one episode in each
# len(policies) + 1 playing it.
OWN = "own"


def _own_actions(
    own: Any, reference: Reference, seed: int, index: int, steps: int
) -> Iterator[Any]:
    """The spec's policy, closed loop: each action from the state before its step (read as
    the step is taken), with a generator of its own for the episode."""
    rng = np.random.default_rng([seed, index, 0x0111])
    for _ in range(steps):
        yield own(reference.read_state(), rng)


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class _Record:
    """Every step of every episode, appended flat and stacked once at the end."""

    def __init__(self) -> None:
        self.states: list[State] = []
        self.actions: list[Any] = []
        self.obs: list[np.ndarray] = []
        self.reward: list[float] = []
        self.terminated: list[bool] = []
        self.truncated: list[bool] = []
        self.noise: list[Any] = []

    def played(self, plans: list[EpisodePlan], lengths: list[int]) -> Played:
        noise = None if not self.noise or self.noise[0] is None else np.stack(self.noise)
        return Played(
            plans,
            np.asarray(lengths, dtype=np.int64),
            stack_states(self.states),
            np.asarray(self.actions),
            Steps(
                np.array(self.obs),
                np.asarray(self.reward),
                np.asarray(self.terminated),
                np.asarray(self.truncated),
            ),
            noise,
        )


def _play(
    reference: Reference,
    plan: EpisodePlan,
    actions: Iterable[Any],
    counter: str | None,
    record: _Record,
) -> int:
    reference.reset(plan.reset_seed)
    if plan.late_start is not None and counter:
        state = reference.read_state()
        state[counter] = np.asarray(plan.late_start)
        reference.write_state(state)
    # Bound methods looked up once: this loop is most of what the reference side costs.
    read, step = reference.read_state, reference.step
    states, taken, obs = record.states.append, record.actions.append, record.obs.append
    reward, terminated = record.reward.append, record.terminated.append
    truncated, noise = record.truncated.append, record.noise.append
    length = 0
    for action in actions:
        states(read())
        taken(action)
        out = step(action)
        noise(out.noise)
        obs(out.obs)
        reward(out.reward)
        terminated(out.terminated)
        truncated(out.truncated)
        length += 1
        if out.terminated or out.truncated:
            break
    return length


def free_request(played: Played, pad_to: list[int] | None = None) -> Rollout:
    """Start states and the actions, padded to the longest episode."""
    # Free-running through the reference's own noise, step by step (contract 3).
    noise = None if played.noise is None else played.padded_noise()
    return Rollout(played.start_states(), played.padded_actions(), noise, pad_to)


def resync_request(played: Played, pad_to: list[int] | None = None) -> StepBatch:
    # The state each step leaves comes back in the same answer (left.py compares it).
    return StepBatch(
        played.states, played.actions, noise=played.noise, pad_to=pad_to, read_state=True
    )


def _flatten_free(port: Steps, lengths: np.ndarray) -> Steps:
    """Rows of a (B, T, ...) free-running answer cut to each episode's length and joined."""
    count, longest = len(lengths), int(lengths.max(initial=0))
    steps = port.terminated.shape[1] if port.terminated.ndim == 2 else 0
    shapes = [part.shape[:2] for part in port.parts()]
    if steps < longest or any(shape != (count, steps) for shape in shapes):
        raise PortError(
            f"port answered a free-running batch of {count} episodes x {longest} steps with "
            f"arrays shaped {', '.join(str(tuple(shape)) for shape in shapes)}"
        )
    # Row b*T + t of the flattened answer for each episode b and step t < its length.
    within = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    rows = np.repeat(np.arange(count) * steps, lengths) + within
    return Steps(*(part.reshape(count * steps, *part.shape[2:])[rows] for part in port.parts()))


def answer_steps(played: Played, result: dict[str, Any], mode: str) -> Steps:
    """The port's answer as one row per compared transition (free-running's cut to length)."""
    answer = Steps.of(result)
    return _flatten_free(answer, played.lengths) if mode == "free" else answer


def judge(
    spec: PortSpec,
    played: Played,
    result: dict[str, Any],
    mode: str,
    options: L3Options,
    replay: Replay,
) -> LevelResult:
    """Compare the port's answer for one mode with the reference episodes."""
    level = judge_steps(spec, played, answer_steps(played, result, mode), mode, options, replay)
    level.seconds["port_compile"] = float(result.get("compile_s", 0.0))
    level.seconds["port_run"] = float(result.get("run_s", 0.0))
    return level


def judge_steps(
    spec: PortSpec,
    played: Played,
    actual: Steps,
    mode: str,
    options: L3Options,
    replay: Replay,
    after: dict[str, Any] | None = None,
) -> LevelResult:
    """Compare the port's rows (one per transition of `played`) with the reference's, and
    `after`, the port's state after each step where it read it (resync), with the state the
    reference had before the episode's next step."""
    started = time.perf_counter()
    free = mode == "free"
    expected = played.steps
    level = LevelResult(level="l3", mode=mode, passed=True, episodes=len(played))
    level.steps_compared = played.transitions
    level.endings = played.endings()
    problems = contract_problems(expected.obs, actual.obs)
    starts = played.starts
    if problems:
        found = [(row, (int(starts[row]), problems)) for row in range(len(played))]
    else:
        found = [
            (int(np.searchsorted(starts, index, side="right") - 1), (index, diffs))
            for index, diffs in earliest(
                divergent_steps(spec, expected, actual, free, starts),
                [] if after is None else state_divergences(spec, played, after),
                starts,
            )
        ]
    for row, (index, diffs) in found:
        level.passed = False
        level.diverged_episodes += 1
        if len(level.divergences) < KEEP_DIVERGENCES:
            divergence = _divergence(played, row, (index, diffs), mode, options, replay)
            if not problems:
                segment = (int(starts[row]), int(starts[row] + played.lengths[row]))
                divergence.series = field_series(spec, expected, actual, index, segment, diffs)
            level.divergences.append(divergence)
    level.seconds = {"compare": time.perf_counter() - started}
    return level


def _divergence(
    played: Played, row: int, found: tuple[int, list], mode: str, options: L3Options, replay: Replay
) -> Divergence:
    index, diffs = found
    plan = played.plans[row]
    first = int(played.starts[row])
    step = index - first
    return Divergence(
        level="l3",
        mode=mode,
        episode=plan.index,
        step=step,
        seed=options.seed,
        reset_seed=plan.reset_seed,
        policy=plan.policy,
        late_start=plan.late_start,
        start_state={
            k: np.asarray(v).tolist()
            for k, v in played.state_at(index if mode == "resync" else first).items()
        },
        action_prefix=[np.asarray(a).tolist() for a in played.actions[first : index + 1]],
        fields=diffs,
        message="state re-injected at this step"
        if mode == "resync"
        else "free-running from the episode's start state",
        replay=replay.at(mode=mode, episode=plan.index).command(),
        replay_of=replay.at(mode=mode, episode=plan.index),
    )


def merge(parts: list[LevelResult]) -> LevelResult:
    """One mode's results over chunks of episodes as one level result: counts add up, and the
    divergences kept are the first few by episode, whatever order the chunks finished in."""
    level = LevelResult(level="l3", mode=parts[0].mode, passed=all(p.passed for p in parts))
    for part in parts:
        level.episodes += part.episodes
        level.steps_compared += part.steps_compared
        level.diverged_episodes += part.diverged_episodes
        for ending, count in part.endings.items():
            level.endings[ending] = level.endings.get(ending, 0) + count
        for name, seconds in part.seconds.items():
            level.seconds[name] = level.seconds.get(name, 0.0) + seconds
        level.gaps += [gap for gap in part.gaps if gap not in level.gaps]
    found = sorted((d for p in parts for d in p.divergences), key=lambda d: d.episode or 0)
    level.divergences = found[:KEEP_DIVERGENCES]
    return level
