"""L2 interaction checks: sequences of operations on reference and port side by side.

A hypothesis state machine mixes reset, state load, step, state read and steps across an
episode's end, on the reference and on a live port session, and compares every answer.
A second check runs B envs as one batch and as B single envs: they must agree.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.errors import Flaky
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    precondition,
    rule,
    run_state_machine_as_test,
)

from envport.serve.client import PortWorker
from envport.spec import PortSpec
from envport.verifiers.compare import Steps, divergent_steps
from envport.verifiers.divergence import Divergence, FieldDiff, LevelResult
from envport.verifiers.hypo import (
    SHRINK_SECONDS,
    PortGone,
    captured_reports,
    hypothesis_settings,
    port_failures_abort,
    shrink_time_limit,
)
from envport.verifiers.l1 import Divergent, field_diffs
from envport.verifiers.policies import plan_actions
from envport.verifiers.randomness import noise_args, play_noise
from envport.verifiers.reference import Reference
from envport.verifiers.strategies import action_strategy, state_strategy

BATCH_STEPS = 20
# Steps compared by the machine across all its runs (the machine class has no other outlet).
_COUNTS = {"steps": 0}


class _Guarded:
    """A worker whose failures end the state machine instead of being shrunk."""

    def __init__(self, worker: PortWorker) -> None:
        self.worker = worker

    def request(self, op: str, **args: Any) -> Any:
        with port_failures_abort():
            return self.worker.request(op, **args)


def _stack(state: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {k: np.asarray(v)[None] for k, v in state.items()}


def _first(state: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {k: v[0] for k, v in state.items()}


def _machine(spec: PortSpec, reference: Reference, worker: Any, backend: str) -> type:
    states = state_strategy(spec)
    actions = action_strategy(reference.action_space)
    counts = _COUNTS
    # Only the NumPy contract autoresets; a JAX step after an episode's end is undefined.
    autoresets = backend == "numpy"

    class Interaction(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.done = False
            self.log: list[str] = []
            self.readable = True

        def _load(self, what: str) -> None:
            state = reference.read_state()
            answer = worker.request("session_load", states=_stack(state))
            self.done = False
            self._compare_states(answer["state"], f"{what}, then state read", free=False)

        def _compare_states(self, read: dict | None, what: str, free: bool) -> None:
            if read is None:
                self.readable = False
                return
            expected = reference.read_state()
            diffs = field_diffs(spec, expected, _first(read), label="state.")
            if free:
                diffs = [d for d in diffs if not _within_free(spec, d)]
            if diffs:
                raise Divergent(diffs, expected, f"{what}: port state differs")

        @initialize(seed=st.integers(0, 2**16))
        def start(self, seed: int) -> None:
            self.log.append(f"reset(seed={seed})")
            reference.reset(seed)
            self._load("reset")

        @rule(seed=st.integers(0, 2**16))
        def reset(self, seed: int) -> None:
            self.start(seed)

        @rule(state=states)
        def load_state(self, state: dict[str, np.ndarray]) -> None:
            self.log.append(f"load_state({ {k: v.tolist() for k, v in state.items()} })")
            # Load means a fresh env given this state: hidden bookkeeping of the reference
            # (CartPole's steps past termination) starts over, as in L1 and L3.
            reference.reset(0)
            reference.write_state({**reference.read_state(), **state})
            self._load("state load")

        @precondition(lambda self: not self.done)
        @rule(action=actions)
        def step(self, action: Any) -> None:
            self.log.append(f"step({np.asarray(action).tolist()})")
            counts["steps"] += 1
            out = reference.step(action)
            noise = noise_args(None if out.noise is None else out.noise[None])
            answer = worker.request("session_step", actions=np.asarray([action]), **noise)
            expected = Steps.single(out)
            actual = Steps.of(answer)
            found = divergent_steps(spec, expected, actual, True, np.asarray([0]))
            if found:
                raise Divergent(found[0][1], reference.read_state(), "step differs")
            self.done = out.terminated or out.truncated
            self._compare_states(answer["state"], "step, then state read", free=True)

        @precondition(lambda self: self.done and autoresets)
        @rule(action=actions)
        def step_after_end(self, action: Any) -> None:
            self.log.append(f"step_after_end({np.asarray(action).tolist()})")
            answer = worker.request("session_step", actions=np.asarray([action]))
            # Next-step autoreset: the step after an end starts over and reports nothing.
            wrong = [
                FieldDiff(field=name, expected=want, actual=np.asarray(answer[name])[0].item())
                for name, want in (("reward", 0.0), ("terminated", False), ("truncated", False))
                if np.asarray(answer[name])[0].item() != want
            ]
            if wrong:
                raise Divergent(wrong, {}, "the step after an episode's end did not autoreset")
            # The reference cannot follow the port's own reset: re-synchronise both.
            reference.reset(0)
            self._load("autoreset, then reset and state load")

    return Interaction


def _within_free(spec: PortSpec, diff: FieldDiff) -> bool:
    if diff.difference is None:
        return False
    atol, rtol = spec.tolerance_for(diff.field.removeprefix("state.")).bounds(free_running=True)
    return diff.difference <= atol + rtol * abs(float(diff.expected))


def check_interaction(
    spec: PortSpec,
    reference: Reference,
    worker: PortWorker,
    backend: str,
    examples: int,
    replay: str,
    shrink: bool = True,
) -> LevelResult:
    started = time.perf_counter()
    machine = _machine(spec, reference, _Guarded(worker), backend)
    settings = hypothesis_settings(examples, shrink)
    settings = type(settings)(settings, derandomize=True, stateful_step_count=spec.levels.l2.steps)
    level = LevelResult(level="l2", mode="interaction", passed=True, episodes=examples)
    _COUNTS["steps"] = 0
    last: dict[str, Any] = {}
    original_init = machine.__init__

    def tracking_init(self: Any) -> None:
        original_init(self)
        last["machine"] = self

    machine.__init__ = tracking_init
    try:
        with shrink_time_limit(SHRINK_SECONDS), captured_reports():
            run_state_machine_as_test(machine, settings=settings)
    except PortGone as gone:
        raise gone.error from None
    except Divergent as failure:
        level.passed = False
        level.diverged_episodes = 1
        steps = last["machine"].log if "machine" in last else []
        level.divergences.append(
            Divergence(
                level="l2",
                mode="interaction",
                step=len(steps) - 1,
                start_state={k: np.asarray(v).tolist() for k, v in failure.inputs.items()},
                action_prefix=steps,
                fields=failure.diffs,
                message=f"{failure} after: {'; '.join(steps)}",
                replay=replay,
            )
        )
    except Flaky as error:
        level.passed = False
        level.divergences.append(
            Divergence(level="l2", mode="interaction", message=f"not reproducible: {error}")
        )
    level.steps_compared = _COUNTS["steps"]
    if "machine" in last and not last["machine"].readable:
        level.mode = "interaction (no state_to_reference: state reads not checked)"
    level.seconds = {"total": time.perf_counter() - started}
    return level


def check_batch(
    spec: PortSpec, reference: Reference, worker: PortWorker, seed: int, replay: str
) -> LevelResult:
    """B envs stepped as one batch must equal the same B envs stepped one by one."""
    started = time.perf_counter()
    batch = spec.levels.l2.batch
    states = []
    for index in range(batch):
        reference.reset(seed * 1000 + index)
        states.append(reference.read_state())
    stacked = {k: np.stack([s[k] for s in states]) for k in states[0]}
    actions = np.stack(
        [
            np.asarray(plan_actions("sticky", reference.action_space, seed, i, BATCH_STEPS))
            for i in range(batch)
        ]
    )
    # A stochastic env's B envs all get noise recorded from the reference, batched or alone.
    seeds = [seed * 1000 + index for index in range(batch)]
    noise = noise_args(play_noise(reference, seeds, actions))
    answer = worker.request("batch_vs_single", states=stacked, actions=actions, **noise)
    level = LevelResult(level="l2", mode="batch", passed=True, episodes=batch)
    for row in range(batch):
        single = {k: v[row] for k, v in answer["single"].items()}
        batched = {k: v[row] for k, v in answer["batch"].items()}
        ended = np.flatnonzero(np.asarray(single["terminated"]) | np.asarray(single["truncated"]))
        length = int(ended[0]) + 1 if ended.size else BATCH_STEPS
        expected = Steps.of(single, slice(0, length))
        actual = Steps.of(batched, slice(0, length))
        level.steps_compared += length
        found = divergent_steps(spec, expected, actual, False, np.asarray([0]))
        if found:
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
                    message=f"env {row} of a batch of {batch} differs from the same env alone",
                    replay=replay,
                )
            )
    level.seconds = {"total": time.perf_counter() - started}
    return level


def run_l2(
    spec: PortSpec,
    reference: Reference,
    worker: PortWorker,
    backend: str | None,
    examples: int,
    seed: int,
    replay: str,
    shrink: bool = True,
) -> list[LevelResult]:
    return [
        check_interaction(spec, reference, worker, backend or "", examples, replay, shrink),
        check_batch(spec, reference, worker, seed, replay),
    ]
