"""Reverse injection: verify a port that cannot load a state from the states it starts in.

Every other level writes the reference's state into the port. A compiled vector env
(envpool) has no state setter, so here the direction is turned round: the port resets
itself (B envs, one batch), the harness reads each env's start state (the port's getter, or
its observation where the spec declares the observation the state: `state.from_observation`)
and writes it into the reference. Both then take the same planned actions and every step is
compared:

- `reverse.free`: the reference free-running from the port's start state, against the port.
- `reverse.resync`: the state the port reached after each step written into the reference
  again, one reference step from it: a single-step bug told apart from drift.
- `reverse.states` (ports with a getter): the states both reached, field by field.

Nothing here can draw states or start an episode near the time limit: L1, L2 and L3's late
starts need a state setter, and `verify` reports them as not applicable.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from envport.errors import PortError, SpecError
from envport.serve.ops import ReverseReset, ReverseRollout
from envport.spec import PortSpec
from envport.targets.reference import Reference, State
from envport.verifiers.draws.policies import EpisodePlan, Planner
from envport.verifiers.levels.l3 import rollout as l3
from envport.verifiers.levels.l3.played import Played
from envport.verifiers.options import L3Options
from envport.verifiers.reporting.compare import Steps
from envport.verifiers.reporting.divergence import Divergence, FieldDiff, LevelResult
from envport.verifiers.reporting.replay import Replay
from envport.verifiers.reporting.states import stack_states

FREE_NOTE = "free-running from the port's own start state, written into the reference"
RESYNC_NOTE = "the port's state after the last step written into the reference"


def not_applicable(levels: tuple[str, ...], cases: bool, stochastic: bool) -> dict[str, str]:
    """The checks asked for that need a state setter, each with why it did not run."""
    why = {
        "l1": "its probes and transitions start from drawn states the port cannot load",
        "l2": "its sequences load states, and batch-equals-singles starts envs from them",
        "l4": "its evaluations start from the reference's reset states, injected",
    }
    skipped = {level: reason for level, reason in why.items() if level in levels}
    skipped["l3.late_start"] = "no episode can start with the port's step counter set late"
    if stochastic:
        skipped["reverse.resync"] = "a step from an injected state would draw its own noise"
    if cases:
        skipped["cases"] = "a proposed case starts from a state the port cannot load"
    return skipped


def observed_state(spec: PortSpec, base: State, obs: np.ndarray) -> State:
    """`base` with the fields the spec reads from the observation replaced by its values."""
    flat = np.asarray(obs).reshape(-1)
    state = dict(base)
    for name, components in spec.state.from_observation.items():
        if name not in base:
            raise SpecError(f"key `state.from_observation.{name}`: the reference has no such field")
        want = np.asarray(base[name])
        if max(components) >= flat.size or len(components) != want.size:
            raise SpecError(
                f"key `state.from_observation.{name}`: expected {want.size} components of the "
                f"{flat.size}-component observation, got {components}"
            )
        state[name] = flat[components].reshape(want.shape).astype(want.dtype)
    return state


def check_declared(spec: PortSpec, reference: Reference, seed: int) -> None:
    """The spec's claim that the observation holds the state, checked on the reference."""
    obs = reference.reset(seed)
    state = reference.read_state()
    claimed = observed_state(spec, state, obs)
    for name in spec.state.from_observation:
        atol, rtol = spec.tolerance_for(name).bounds(free_running=False)
        if not np.allclose(claimed[name], state[name], atol=atol, rtol=rtol):
            raise SpecError(
                f"key `state.from_observation.{name}`: the reference's own observation does "
                f"not hold it (observation gives {claimed[name].tolist()}, state is "
                f"{np.asarray(state[name]).tolist()})"
            )


class _Episodes:
    """The reference's side of every episode: the state before and after each step."""

    def __init__(self) -> None:
        self.before: list[State] = []
        self.after: list[State] = []
        self.actions: list[Any] = []
        self.outputs: list[Any] = []
        self.lengths: list[int] = []

    def play(self, reference: Reference, plan: EpisodePlan, start: State, actions: list) -> None:
        reference.reset(plan.reset_seed)
        reference.write_state({**reference.read_state(), **start})
        length = 0
        for action in actions:
            self.before.append(reference.read_state())
            out = reference.step(action)
            self.after.append(reference.read_state())
            self.actions.append(action)
            self.outputs.append(out)
            length += 1
            if out.terminated or out.truncated:
                break
        self.lengths.append(length)

    def played(self, plans: list[EpisodePlan], outputs: list[Any] | None = None) -> Played:
        outs = self.outputs if outputs is None else outputs
        noise = [o.noise for o in outs]
        return Played(
            plans,
            np.asarray(self.lengths, dtype=np.int64),
            stack_states(self.before),
            np.asarray(self.actions),
            Steps(
                np.array([o.obs for o in outs]),
                np.asarray([o.reward for o in outs]),
                np.asarray([o.terminated for o in outs]),
                np.asarray([o.truncated for o in outs]),
            ),
            None if noise[0] is None else np.stack(noise),
        )


def _start_states(spec: PortSpec, reference: Reference, plans: list, answer: dict) -> list[State]:
    getter = answer.get("state")
    starts = []
    for row, plan in enumerate(plans):
        if getter is not None:
            starts.append({k: np.asarray(v[row]) for k, v in getter.items()})
            continue
        reference.reset(plan.reset_seed)
        starts.append(observed_state(spec, reference.read_state(), answer["obs"][row]))
    return starts


def _relabel(level: LevelResult, mode: str, note: str, source: str) -> LevelResult:
    level.level, level.mode = "reverse", mode
    for divergence in level.divergences:
        divergence.level, divergence.mode, divergence.message = "reverse", mode, note
    level.note = f"{level.summary()}; start states {source}"
    return level


# Given each episode's start state and its planned actions, the actions to play instead: a
# hook for episodes constructed on the reference (which can load any state) before the port
# plays them, e.g. one that ends by termination on the step limit's own step.
Choose = Callable[[list[State], list[list[Any]]], list[list[Any]]]


def run_reverse(
    spec: PortSpec,
    reference: Reference,
    worker: Any,
    options: L3Options,
    replay: Replay,
    choose: Choose | None = None,
) -> list[LevelResult]:
    """The port resets `episodes` envs at once; the reference plays L3's plan from each start
    state; the port then plays the same actions (fed the reference's noise, if stochastic)."""
    config = spec.levels.l3
    stochastic = spec.randomness is not None
    planner = Planner(options.seed, spec.l3_policies)
    plans = [planner.plan(index) for index in range(options.episodes)]
    actions = [
        list(planner.actions(plan.policy, reference.action_space, plan.index, options.steps))
        for plan in plans
    ]
    start = worker.request(ReverseReset(num_envs=len(plans), seed=options.seed))
    if start.get("state") is None and not spec.state.from_observation:
        raise SpecError(
            "reverse injection needs the port's start state: the port has no getter "
            "(`state_to_reference` and, for NumPy, `VectorEnv.get_state`) and the spec "
            "declares no `state.from_observation`"
        )
    source = "from the port's getter" if start.get("state") is not None else "from its observation"
    if start.get("state") is None:
        check_declared(spec, reference, plans[0].reset_seed)
    starts = _start_states(spec, reference, plans, start)
    if choose is not None:
        actions = choose(starts, actions)
    episodes = _Episodes()
    for plan, start_state, planned in zip(plans, starts, actions, strict=True):
        episodes.play(reference, plan, start_state, planned)
    played = episodes.played(plans)
    # A stochastic env: the reference's own draws, so a port with step_given_noise follows it.
    noise = played.padded_noise() if stochastic else None
    answer = worker.request(ReverseRollout(actions=played.padded_actions(), noise=noise))
    actual = _port_rows(played, answer)
    levels = []
    if options.mode in ("free", "both"):
        compared = played.within(config.free_horizon)
        rows = actual if compared is played else _port_rows(compared, answer)
        free = l3.judge_steps(spec, compared, rows, "free", options, replay)
        levels.append(_relabel(free, "free", FREE_NOTE, source))
    if options.mode in ("resync", "both") and not stochastic:
        resync = _resync(spec, reference, episodes, plans, start, answer)
        level = l3.judge_steps(spec, resync, actual, "resync", options, replay)
        levels.append(_relabel(level, "resync", RESYNC_NOTE, source))
    if answer.get("states") is not None:
        levels.append(_states_reached(spec, played, episodes, answer, replay, source))
    return levels


def _port_rows(played: Played, answer: dict) -> Steps:
    return l3.answer_steps(played, answer, "free")


def _port_state_after(spec: PortSpec, answer: dict, start: dict, row: int, step: int, base: State):
    """The state the port was in before `step` of episode `row`, as the reference reads it."""
    if answer.get("states") is not None:
        if step == 0:
            return {k: np.asarray(v[row]) for k, v in start["state"].items()}
        return {k: np.asarray(v[row, step - 1]) for k, v in answer["states"].items()}
    obs = start["obs"][row] if step == 0 else answer["obs"][row, step - 1]
    return observed_state(spec, base, obs)


def _resync(
    spec: PortSpec,
    reference: Reference,
    episodes: _Episodes,
    plans: list[EpisodePlan],
    start: dict,
    answer: dict,
) -> Played:
    """One reference step from each state the port reached (the first from its start)."""
    outputs, injected = [], []
    row_of = np.repeat(np.arange(len(plans)), episodes.lengths)
    step_of = np.arange(len(row_of)) - np.repeat(
        np.cumsum(episodes.lengths) - episodes.lengths, episodes.lengths
    )
    for index, (row, step) in enumerate(zip(row_of, step_of, strict=True)):
        if step == 0:
            # A fresh env per episode: the reference's hidden bookkeeping starts clean.
            reference.reset(plans[row].reset_seed)
        base = episodes.before[index]
        state = {**base, **_port_state_after(spec, answer, start, int(row), int(step), base)}
        reference.write_state(state)
        injected.append(reference.read_state())
        outputs.append(reference.step(episodes.actions[index]))
    resync = _Episodes()
    resync.before, resync.actions, resync.lengths = injected, episodes.actions, episodes.lengths
    return resync.played(plans, outputs)


def _states_reached(
    spec: PortSpec, played: Played, episodes: _Episodes, answer: dict, replay: Replay, source: str
) -> LevelResult:
    """The port's states after each step (its getter) against the reference's, free-running."""
    expected = stack_states(episodes.after)
    ports = _flatten_states(answer["states"], played.lengths)
    horizon = spec.levels.l3.free_horizon
    if horizon is not None:
        # Free-running, so a chaotic env's states are compared only as far as its obs are.
        keep = np.arange(played.transitions) - np.repeat(played.starts, played.lengths) < horizon
        expected = {k: v[keep] for k, v in expected.items()}
        ports = {k: v[keep] for k, v in ports.items()}
        played = played.within(horizon)
    level = LevelResult(level="reverse", mode="states", passed=True, episodes=len(played))
    level.steps_compared = played.transitions
    bad = np.zeros(played.transitions, dtype=bool)
    for name, want in expected.items():
        if name not in ports:
            raise PortError(f"the port's state getter gives no field `{name}`")
        bad |= _mismatch(spec, name, want, ports[name])
    starts = played.starts
    failing = np.flatnonzero(bad)
    episode_of = np.searchsorted(starts, failing, side="right") - 1
    for index, row in _firsts(failing, episode_of):
        level.passed = False
        level.diverged_episodes += 1
        if len(level.divergences) < l3.KEEP_DIVERGENCES:
            level.divergences.append(
                _state_divergence(spec, played, expected, ports, index, row, replay)
            )
    level.note = f"{level.summary()}; start states {source}"
    return level


def _flatten_states(states: dict, lengths: np.ndarray) -> dict[str, np.ndarray]:
    within = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    rows = np.repeat(np.arange(len(lengths)), lengths)
    return {k: np.asarray(v)[rows, within] for k, v in states.items()}


def _mismatch(spec: PortSpec, name: str, want: np.ndarray, got: np.ndarray) -> np.ndarray:
    want, got = np.asarray(want), np.asarray(got)
    if want.shape != got.shape:
        return np.ones(len(want), dtype=bool)
    if want.dtype.kind in "biu" and got.dtype.kind in "biu":
        differs = want != got
    else:
        atol, rtol = spec.tolerance_for(name).bounds(free_running=True)
        differs = ~np.isclose(got.astype(float), want.astype(float), atol=atol, rtol=rtol)
    return differs.reshape(len(want), -1).any(axis=1)


def _firsts(failing: np.ndarray, episode_of: np.ndarray) -> list[tuple[int, int]]:
    if failing.size == 0:
        return []
    first = np.concatenate([[True], episode_of[1:] != episode_of[:-1]])
    return [(int(i), int(e)) for i, e in zip(failing[first], episode_of[first], strict=True)]


def _state_divergence(
    spec: PortSpec,
    played: Played,
    expected: dict,
    ports: dict,
    index: int,
    row: int,
    replay: Replay,
) -> Divergence:
    first = int(played.starts[row])
    plan = played.plans[row]
    diffs = []
    for name, want in expected.items():
        w, g = np.asarray(want[index]).reshape(-1), np.asarray(ports[name][index]).reshape(-1)
        for component, (a, b) in enumerate(zip(w, g, strict=False)):
            label = f"state.{name}" + (f"[{component}]" if w.size > 1 else "")
            if bool(_mismatch(spec, name, np.asarray([a]), np.asarray([b]))[0]):
                diffs.append(FieldDiff(field=label, expected=a.item(), actual=b.item()))
    return Divergence(
        level="reverse",
        mode="states",
        episode=plan.index,
        step=index - first,
        reset_seed=plan.reset_seed,
        policy=plan.policy,
        start_state={k: np.asarray(v).tolist() for k, v in played.state_at(first).items()},
        action_prefix=[np.asarray(a).tolist() for a in played.actions[first : index + 1]],
        fields=diffs,
        message="the state reached after this step, read through the port's getter",
        replay=replay.at(mode="free").command(),
        replay_of=replay.at(mode="free"),
    )
