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
from envport.verifiers.compare import Steps, contract_problems, divergent_steps
from envport.verifiers.divergence import Divergence, LevelResult
from envport.verifiers.policies import EpisodePlan, plan_actions, plan_episode
from envport.verifiers.reference import Reference, State
from envport.verifiers.series import field_series

# Divergences kept per level: the first few tell the story; the count tells the extent.
KEEP_DIVERGENCES = 5


@dataclass
class ReferenceEpisode:
    plan: EpisodePlan
    # The state before each step, each field stacked over the episode's steps.
    states: dict[str, np.ndarray] = field(default_factory=dict)
    actions: list[Any] = field(default_factory=list)
    steps: Steps | None = None
    # A stochastic env: each step's noise, mapped from the reference's draws (stacked).
    noise: np.ndarray | None = None


@dataclass
class L3Options:
    episodes: int
    steps: int
    mode: str
    seed: int = 0
    only_episode: int | None = None


def episode_indices(options: L3Options) -> list[int]:
    if options.only_episode is not None:
        return [options.only_episode]
    return list(range(options.episodes))


def play_reference(
    reference: Reference, spec: PortSpec, options: L3Options, indices: list[int] | None = None
) -> list[ReferenceEpisode]:
    config = spec.levels.l3
    counter = spec.state.step_counter
    indices = episode_indices(options) if indices is None else indices
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
    actions = plan_actions(
        plan.policy, reference.action_space, options.seed, plan.index, options.steps
    )
    episode = ReferenceEpisode(plan)
    states: list[State] = []
    obs, rewards, terminated, truncated, noise = [], [], [], [], []
    for action in actions:
        states.append(reference.read_state())
        episode.actions.append(action)
        out = reference.step(action)
        noise.append(out.noise)
        obs.append(out.obs)
        rewards.append(out.reward)
        terminated.append(out.terminated)
        truncated.append(out.truncated)
        if out.terminated or out.truncated:
            break
    episode.states = stack_states(states)
    episode.noise = None if noise[0] is None else np.stack(noise)
    episode.steps = Steps(
        np.stack(obs), np.asarray(rewards), np.asarray(terminated), np.asarray(truncated)
    )
    return episode


def stack_states(states: list[State]) -> dict[str, np.ndarray]:
    return {name: np.stack([s[name] for s in states]) for name in states[0]}


def join_states(parts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    return {name: np.concatenate([p[name] for p in parts]) for name in parts[0]}


def state_at(episode: ReferenceEpisode, step: int) -> State:
    return {name: values[step] for name, values in episode.states.items()}


def free_request(episodes: list[ReferenceEpisode]) -> dict[str, Any]:
    """Start states, and actions padded to the longest episode (nothing past an end is compared)."""
    steps = max(len(e.actions) for e in episodes)
    actions = []
    for episode in episodes:
        padded = list(episode.actions) + [episode.actions[-1]] * (steps - len(episode.actions))
        actions.append(np.asarray(padded))
    starts = stack_states([state_at(e, 0) for e in episodes])
    request = {"states": starts, "actions": np.stack(actions)}
    if episodes[0].noise is not None:
        # Free-running through the reference's own noise, step by step (contract 3).
        request["noise"] = np.stack([_pad(e.noise, steps) for e in episodes])
    return request


def _pad(rows: Any, length: int) -> np.ndarray:
    return np.concatenate([rows, np.repeat(rows[-1:], length - len(rows), axis=0)])


def resync_request(episodes: list[ReferenceEpisode]) -> dict[str, Any]:
    states = join_states([e.states for e in episodes])
    actions = [a for e in episodes for a in e.actions]
    request = {"states": states, "actions": np.asarray(actions)}
    if episodes[0].noise is not None:
        request["noise"] = _joined_noise(episodes)
    return request


def _port_steps(result: dict[str, Any]) -> Steps:
    return Steps.of(result)


def _flatten_free(port: Steps, lengths: list[int]) -> Steps:
    """Rows of a (B, T, ...) free-running answer cut to each episode's length and joined."""
    mask = np.arange(port.reward.shape[1])[None, :] < np.asarray(lengths)[:, None]
    return Steps(port.obs[mask], port.reward[mask], port.terminated[mask], port.truncated[mask])


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
    free = mode == "free"
    lengths = [len(e.actions) for e in episodes]
    expected = Steps(
        *(np.concatenate(parts) for parts in zip(*(_parts(e.steps) for e in episodes), strict=True))
    )
    answer = Steps.of(result)
    actual = _flatten_free(answer, lengths) if free else answer
    level = LevelResult(level="l3", mode=mode, passed=True, episodes=len(episodes))
    level.steps_compared = int(sum(lengths))
    for episode in episodes:
        ending = _ending(episode.steps)  # type: ignore[arg-type]
        level.endings[ending] = level.endings.get(ending, 0) + 1
    problems = contract_problems(expected.obs, actual.obs)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(int)
    if problems:
        found = [(row, (0, problems)) for row in range(len(episodes))]
    else:
        found = [
            (int(np.searchsorted(starts, index, side="right") - 1), (index, diffs))
            for index, diffs in divergent_steps(spec, expected, actual, free, starts)
        ]
    for row, (index, diffs) in found:
        level.passed = False
        level.diverged_episodes += 1
        if len(level.divergences) < KEEP_DIVERGENCES:
            step = index - int(starts[row]) if not problems else 0
            divergence = _divergence(episodes[row], (step, diffs), mode, options, replay)
            if not problems:
                segment = (int(starts[row]), int(starts[row]) + lengths[row])
                divergence.series = field_series(spec, expected, actual, index, segment, diffs)
            level.divergences.append(divergence)
    level.seconds = {
        "port_compile": float(result.get("compile_s", 0.0)),
        "port_run": float(result.get("run_s", 0.0)),
        "compare": time.perf_counter() - started,
    }
    return level


def _parts(steps: Steps | None) -> tuple[np.ndarray, ...]:
    assert steps is not None
    return steps.obs, steps.reward, steps.terminated, steps.truncated


def _ending(steps: Steps) -> str:
    if steps.terminated[-1]:
        return "terminated"
    return "truncated" if steps.truncated[-1] else "step limit"


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
            for k, v in state_at(episode, step if mode == "resync" else 0).items()
        },
        action_prefix=[np.asarray(a).tolist() for a in episode.actions[: step + 1]],
        fields=diffs,
        message="state re-injected at this step"
        if mode == "resync"
        else "free-running from the episode's start state",
        replay=replay.format(mode=mode, episode=plan.index),
    )


# ---- Episodes over the wire: a reference worker plays a share and sends them packed ----


def pack_episodes(episodes: list[ReferenceEpisode]) -> dict[str, Any]:
    """Many episodes as a few joined arrays (msgpack is slow on many small ones)."""
    steps = [e.steps for e in episodes]
    return {
        "plans": [
            [e.plan.index, e.plan.reset_seed, e.plan.policy, e.plan.late_start] for e in episodes
        ],
        "lengths": np.asarray([len(e.actions) for e in episodes]),
        "states": join_states([e.states for e in episodes]),
        "actions": np.asarray([a for e in episodes for a in e.actions]),
        "obs": np.concatenate([s.obs for s in steps]),  # type: ignore[union-attr]
        "reward": np.concatenate([s.reward for s in steps]),  # type: ignore[union-attr]
        "terminated": np.concatenate([s.terminated for s in steps]),  # type: ignore[union-attr]
        "truncated": np.concatenate([s.truncated for s in steps]),  # type: ignore[union-attr]
        "noise": _joined_noise(episodes),
    }


def _joined_noise(episodes: list[ReferenceEpisode]) -> np.ndarray | None:
    if episodes[0].noise is None:
        return None
    return np.concatenate([e.noise for e in episodes])  # type: ignore[misc]


def unpack_episodes(packed: dict[str, Any]) -> list[ReferenceEpisode]:
    episodes = []
    start = 0
    for plan, length in zip(packed["plans"], packed["lengths"].tolist(), strict=True):
        end = start + length
        rows = slice(start, end)
        episode = ReferenceEpisode(EpisodePlan(*plan))
        episode.states = {k: v[rows] for k, v in packed["states"].items()}
        episode.actions = [a.item() if a.ndim == 0 else a for a in packed["actions"][rows]]
        episode.steps = Steps.of(packed, rows)
        if packed.get("noise") is not None:
            episode.noise = packed["noise"][rows]
        episodes.append(episode)
        start = end
    return episodes


class ReferencePlayers:
    """Reference episodes played by a pool of worker processes, in the background from the
    moment it is made; `episodes()` waits only when a check needs them."""

    def __init__(self, spec_file: str, options: L3Options, workers: int, timeout: float) -> None:
        from concurrent.futures import ThreadPoolExecutor

        from envport.serve.pool import WorkerPool

        indices = episode_indices(options)
        # Interleaved shares: long and short episodes spread evenly over the workers.
        shares = [indices[i::workers] for i in range(workers) if indices[i::workers]]
        self.pool = WorkerPool(len(shares), "load_reference", {"spec": spec_file}, timeout)
        tasks = [
            {"spec": spec_file, "options": options.__dict__, "indices": share} for share in shares
        ]
        self._thread = ThreadPoolExecutor(max_workers=1)
        self._future = self._thread.submit(self.pool.map, "play_reference", tasks)

    def episodes(self) -> list[ReferenceEpisode]:
        played = [e for packed in self._future.result() for e in unpack_episodes(packed)]
        return sorted(played, key=lambda e: e.plan.index)

    def close(self) -> None:
        self._thread.shutdown(wait=True)
        self.pool.close()
