"""L2 batch check: B envs stepped as one batch must equal the same B envs stepped alone.

B takes each of the spec's sizes (`levels.l2.batch`, default 1, 7 and 33): odd on purpose,
so a port that works in chunks of 4, 8 or 256 envs meets a partial last chunk, and a batch
of one meets the smallest. A JAX port is vmapped by the harness and has no chunks: it gets
the largest size only. Each env plays a sticky policy (with the spec's share of
out-of-range actions) from its own reference reset state.

The port is never asked for what the reference cannot do (README, the contract): each env's
actions are played on the reference first, and only the steps before its episode ends (or
before a step the reference refuses) are compared; the batch runs as long as its longest
such episode. An env that ended earlier is still stepped inside the batch, which the
contract requires a batched port to survive; a port that crashes is reported with its own
words (a Rust panic's message, the traceback's frames), the env, its state and the action.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from envport.errors import PortError
from envport.serve.ops import BatchVsSingle, Requester, Rollout
from envport.spec import PortSpec
from envport.targets.randomness import play_noise
from envport.targets.reference import Reference, State
from envport.targets.registry import TargetName
from envport.verifiers.draws.action_range import ActionRange
from envport.verifiers.draws.policies import Planner
from envport.verifiers.reporting.compare import Steps, divergent_steps
from envport.verifiers.reporting.divergence import Divergence, LevelResult

BATCH_STEPS = 20


@dataclass
class BatchInputs:
    """What the batch check sends for one size, and the reference's side of it."""

    states: list[State]  # each env's reset state
    stacked: dict[str, np.ndarray]
    actions: np.ndarray  # [size, steps]: as long as the longest episode the reference plays
    noise: np.ndarray | None
    played: list[list[State]]  # per env, the states the reference stepped from

    @property
    def request(self) -> BatchVsSingle:
        return BatchVsSingle(states=self.stacked, actions=self.actions, noise=self.noise)


def batch_inputs(
    reference: Reference, seed: int, size: int, outside: ActionRange | None
) -> BatchInputs:
    """The batch of `size` envs the check plays, the same for the same seed (the JAX
    warm-up, verifiers/levels/l2/warm.py, sends it ahead of the check)."""
    planner = Planner(seed, outside=outside)
    seeds = [seed * 1000 + index for index in range(size)]
    states = []
    for reset_seed in seeds:
        reference.reset(reset_seed)
        states.append(reference.read_state())
    stacked = {k: np.stack([s[k] for s in states]) for k in states[0]}
    space = reference.action_space
    actions = np.stack(
        [np.asarray(list(planner.actions("sticky", space, i, BATCH_STEPS))) for i in range(size)]
    )
    played = [
        _reference_play(reference, seed, row) for seed, row in zip(seeds, actions, strict=True)
    ]
    lengths = [len(trail) for trail in played]
    # As long as the longest episode the reference plays, and no step beyond.
    actions = actions[:, : max(1, *lengths)]
    # A stochastic env's B envs all get noise recorded from the reference, batched or alone.
    noise = play_noise(reference, seeds, actions)
    return BatchInputs(states, stacked, actions, noise, played)


def _check_size(
    spec: PortSpec,
    reference: Reference,
    worker: Requester,
    seed: int,
    replay: str,
    size: int,
    outside: ActionRange | None,
    level: LevelResult,
) -> None:
    inputs = batch_inputs(reference, seed, size, outside)
    states, stacked, actions, noise, played = (
        inputs.states,
        inputs.stacked,
        inputs.actions,
        inputs.noise,
        inputs.played,
    )
    lengths = [len(trail) for trail in played]
    try:
        answer = worker.request(inputs.request)
    except PortError as error:
        level.passed = False
        level.diverged_episodes += 1
        level.divergences.append(
            _crash(worker, error, stacked, actions, noise, played, size, seed, replay)
        )
        return
    level.episodes += size
    for row in range(size):
        single = {k: v[row] for k, v in answer["single"].items()}
        batched = {k: v[row] for k, v in answer["batch"].items()}
        ended = np.flatnonzero(np.asarray(single["terminated"]) | np.asarray(single["truncated"]))
        length = int(ended[0]) + 1 if ended.size else actions.shape[1]
        # Only the steps the reference itself makes from this env's start are compared.
        length = min(length, lengths[row])
        if not length:
            continue
        expected = Steps.of(single, slice(0, length))
        actual = Steps.of(batched, slice(0, length))
        level.steps_compared += length
        found = divergent_steps(spec, expected, actual, False, np.asarray([0]))
        if not found:
            continue
        level.passed = False
        level.diverged_episodes += 1
        step, diffs = found[0]
        level.divergences.append(
            Divergence(
                level="l2",
                mode="batch",
                episode=row,
                step=step,
                seed=seed,
                start_state={k: np.asarray(v).tolist() for k, v in states[row].items()},
                action_prefix=actions[row, : step + 1].tolist(),
                fields=diffs,
                message=f"env {row} of a batch of {size} differs from the same env alone",
                replay=replay,
            )
        )


def _reference_play(reference: Reference, reset_seed: int, actions: np.ndarray) -> list[State]:
    """The states the reference steps from, along `actions` from its seeded reset, up to its
    episode's end or the first step it refuses: the steps the port may be asked for."""
    reference.reset(reset_seed)
    trail = []
    for action in actions:
        before = reference.read_state()
        try:
            out = reference.step(action.item() if np.ndim(action) == 0 else action)
        except Exception:  # the reference refuses this step: nothing to compare it with
            break
        trail.append(before)
        if out.terminated or out.truncated:
            break
    return trail


def _crash(
    worker: Requester,
    error: PortError,
    states: dict[str, np.ndarray],
    actions: np.ndarray,
    noise: np.ndarray | None,
    played: list[list[State]],
    size: int,
    seed: int,
    replay: str,
) -> Divergence:
    """The port failed on the batch: find the env and the step by running each env alone
    (a port that cannot run at all fails again here, and is then reported whole)."""
    process = getattr(worker, "process", None)
    alive = process is None or process.poll() is None
    for row in range(size if alive else 0):
        one = {k: v[row : row + 1] for k, v in states.items()}
        steps = _failing_step(worker, one, actions[row : row + 1], noise, row)
        if steps is None:
            continue
        step, failure = steps
        known = step < len(played[row])
        state = played[row][step] if known else {k: v[row] for k, v in states.items()}
        after_end = "" if known else f", after its episode ended at step {len(played[row])}"
        return Divergence(
            level="l2",
            mode="batch",
            episode=row,
            step=step,
            seed=seed,
            start_state={k: np.asarray(v).tolist() for k, v in state.items()},
            action_prefix=actions[row, : step + 1].tolist(),
            message=(
                f"the port crashed stepping env {row} (alone) at step {step}{after_end}, "
                f"action {np.asarray(actions[row, step]).tolist()}: {failure}"
                + (f"\n{failure.detail}" if failure.detail else "")
            )
            + ("" if known else "; the start state shown is the env's reset state"),
            replay=replay,
        )
    return Divergence(
        level="l2",
        mode="batch",
        seed=seed,
        message=(
            f"the port crashed on a batch of {size} envs (each runs alone): {error}"
            + (f"\n{error.detail}" if error.detail else "")
        ),
        replay=replay,
    )


def _failing_step(
    worker: Requester,
    state: dict[str, np.ndarray],
    actions: np.ndarray,
    noise: np.ndarray | None,
    row: int,
) -> tuple[int, PortError] | None:
    """The first step at which the port fails running this env alone (None: it never does):
    the whole run first, then the shortest failing prefix by bisection."""

    def fails(steps: int) -> PortError | None:
        part = None if noise is None else noise[row : row + 1, :steps]
        try:
            worker.request(Rollout(states=state, actions=actions[:, :steps], noise=part))
        except PortError as failure:
            return failure
        return None

    failure = fails(actions.shape[1])
    if failure is None:
        return None
    low, high = 1, actions.shape[1]  # fails(high); the first failing prefix is in (low-1, high]
    while low < high:
        middle = (low + high) // 2
        found = fails(middle)
        if found is not None:
            high, failure = middle, found
        else:
            low = middle + 1
    return high - 1, failure


def check_batch(
    spec: PortSpec,
    reference: Reference,
    worker: Requester,
    seed: int,
    replay: str,
    outside: ActionRange | None = None,
    backend: str | None = None,
) -> LevelResult:
    started = time.perf_counter()
    level = LevelResult(level="l2", mode="batch", passed=True)
    sizes = spec.levels.l2.batch
    if backend == TargetName.JAX:
        # A JAX port is a one-env function the harness vmaps: it has no chunks of its own,
        # and each size would only cost a compilation. The largest is checked.
        sizes = [max(sizes)]
    for size in sizes:
        _check_size(spec, reference, worker, seed, replay, size, outside, level)
    level.seconds = {"total": time.perf_counter() - started}
    return level
