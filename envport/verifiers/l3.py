"""L3 rollout checks: episodes from matched initial states, every step compared.

The reference plays each episode first (its state read before every step). The port then
replays the same actions from the injected start state in one batched request
(free-running), and, in resync mode, takes one step from every recorded reference state
(state re-injected each step), so a single-step bug is told apart from accumulated drift.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from envport.spec import PortSpec
from envport.verifiers.compare import Steps, contract_problems, first_divergence
from envport.verifiers.divergence import Divergence, LevelResult
from envport.verifiers.policies import EpisodePlan, make_policy, plan_episode
from envport.verifiers.reference import Reference, State

# Divergences kept per level: the first few tell the story; the count tells the extent.
KEEP_DIVERGENCES = 5


@dataclass
class ReferenceEpisode:
    plan: EpisodePlan
    states: list[State] = field(default_factory=list)  # state before each step
    actions: list[Any] = field(default_factory=list)
    steps: Steps | None = None


@dataclass
class L3Options:
    episodes: int
    steps: int
    mode: str
    seed: int = 0
    only_episode: int | None = None


def play_reference(
    reference: Reference, spec: PortSpec, options: L3Options
) -> list[ReferenceEpisode]:
    config = spec.levels.l3
    counter = spec.state.step_counter
    indices = (
        [options.only_episode] if options.only_episode is not None else range(options.episodes)
    )
    episodes = []
    for index in indices:
        plan = plan_episode(
            options.seed,
            index,
            config.policies,
            config.late_start_fraction,
            reference.max_episode_steps if counter else None,
        )
        episodes.append(_play(reference, plan, options, counter))
    return episodes


def _play(
    reference: Reference, plan: EpisodePlan, options: L3Options, counter: str | None
) -> ReferenceEpisode:
    reference.reset(plan.reset_seed)
    if plan.late_start is not None and counter:
        state = reference.read_state()
        state[counter] = np.asarray(plan.late_start)
        reference.write_state(state)
    policy = make_policy(plan.policy, reference.action_space, options.seed, plan.index)
    episode = ReferenceEpisode(plan)
    obs, rewards, terminated, truncated = [], [], [], []
    action = None
    for _ in range(options.steps):
        episode.states.append(reference.read_state())
        action = policy(action)
        episode.actions.append(action)
        out = reference.step(action)
        obs.append(out.obs)
        rewards.append(out.reward)
        terminated.append(out.terminated)
        truncated.append(out.truncated)
        if out.terminated or out.truncated:
            break
    episode.steps = Steps(
        np.stack(obs), np.asarray(rewards), np.asarray(terminated), np.asarray(truncated)
    )
    return episode


def stack_states(states: list[State]) -> dict[str, np.ndarray]:
    return {name: np.stack([s[name] for s in states]) for name in states[0]}


def free_request(episodes: list[ReferenceEpisode], steps: int) -> dict[str, Any]:
    """Start states and actions padded to `steps` (past an episode's end nothing is compared)."""
    actions = []
    for episode in episodes:
        padded = list(episode.actions) + [episode.actions[-1]] * (steps - len(episode.actions))
        actions.append(np.asarray(padded))
    return {"states": stack_states([e.states[0] for e in episodes]), "actions": np.stack(actions)}


def resync_request(episodes: list[ReferenceEpisode]) -> dict[str, Any]:
    states = [s for e in episodes for s in e.states]
    actions = [a for e in episodes for a in e.actions]
    return {"states": stack_states(states), "actions": np.asarray(actions)}


def _port_steps(result: dict[str, Any]) -> Steps:
    return Steps(result["obs"], result["reward"], result["terminated"], result["truncated"])


def judge(
    spec: PortSpec,
    episodes: list[ReferenceEpisode],
    result: dict[str, Any],
    mode: str,
    options: L3Options,
    replay: str,
) -> LevelResult:
    """Compare the port's answer for one mode with the reference episodes."""
    started = time.perf_counter()
    port = _port_steps(result)
    free = mode == "free"
    level = LevelResult(level="l3", mode=mode, passed=True, episodes=len(episodes))
    reference_obs = episodes[0].steps.obs  # type: ignore[union-attr]
    problems = contract_problems(reference_obs, port.obs[0] if free else port.obs)
    offset = 0
    for row, episode in enumerate(episodes):
        expected = episode.steps
        assert expected is not None
        length = len(expected.reward)
        if free:
            actual = Steps(
                port.obs[row], port.reward[row], port.terminated[row], port.truncated[row]
            )
        else:
            actual = port
            actual = Steps(
                *(
                    a[offset : offset + length]
                    for a in (port.obs, port.reward, port.terminated, port.truncated)
                )
            )
            offset += length
        actual = actual.head(length)
        level.steps_compared += length
        found = (0, problems) if problems else first_divergence(spec, expected, actual, free)
        if found is None:
            continue
        level.passed = False
        level.diverged_episodes += 1
        if len(level.divergences) < KEEP_DIVERGENCES:
            level.divergences.append(_divergence(episode, found, mode, options, replay))
    level.seconds = {
        "port_compile": float(result.get("compile_s", 0.0)),
        "port_run": float(result.get("run_s", 0.0)),
        "compare": time.perf_counter() - started,
    }
    return level


def _divergence(
    episode: ReferenceEpisode, found: tuple[int, list], mode: str, options: L3Options, replay: str
) -> Divergence:
    step, diffs = found
    plan = episode.plan
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
            for k, v in (episode.states[step] if mode == "resync" else episode.states[0]).items()
        },
        action_prefix=[np.asarray(a).tolist() for a in episode.actions[: step + 1]],
        fields=diffs,
        message="state re-injected at this step"
        if mode == "resync"
        else "free-running from the episode's start state",
        replay=replay.format(mode=mode, episode=plan.index),
    )
