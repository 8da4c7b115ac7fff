"""L2 interaction checks: sequences of operations on reference and port side by side.

A hypothesis state machine mixes reset, state load, step, state read and steps across an
episode's end, on the reference and on a live port session, and compares every answer.
States and actions come with the edge and out-of-range draws of `strategies`, and one rule
loads a state found one step from termination with the step counter one short of the
limit: the step that ends an episode both ways at once is constructed, not waited for.
A second check runs B envs as one batch and as B single envs, for B of several odd sizes
(a port working in chunks meets a partial last one): they must agree.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from gymnasium import spaces
from hypothesis import strategies as st
from hypothesis.errors import Flaky, Unsatisfiable
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    precondition,
    rule,
    run_state_machine_as_test,
)

from envport.gaps import Gap, GapKind
from envport.io import profile
from envport.serve.ops import Requester, SessionLoad, SessionStep
from envport.spec import PortSpec
from envport.targets.reference import Reference, State, Transition
from envport.targets.registry import TargetName
from envport.verifiers.draws.hypo import (
    PortGone,
    captured_reports,
    draws_independent_of_the_process,
    hypothesis_settings,
    shrink_time_limit,
)
from envport.verifiers.draws.landing import ending_starts, unresolved
from envport.verifiers.draws.rejects import reference_rejects, unsatisfiable
from envport.verifiers.draws.strategies import Draws, action_strategy, draws_for, state_strategy
from envport.verifiers.levels.l2.exchange import Exchange, Undecided, judged
from envport.verifiers.reporting.compare import Steps, divergent_steps
from envport.verifiers.reporting.divergence import Divergence, FieldDiff, LevelResult
from envport.verifiers.reporting.held import Unheld, held_rows
from envport.verifiers.reporting.states import Divergent, field_diffs

# Steps compared by the machine across all its runs (the machine class has no other outlet).
_COUNTS = {"steps": 0}


def _stack(state: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {k: np.asarray(v)[None] for k, v in state.items()}


def _first(state: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {k: v[0] for k, v in state.items()}


def _search_actions(space: spaces.Space) -> list[Any]:
    """Actions tried when searching for a state one step from termination."""
    if isinstance(space, spaces.Discrete):
        return [int(space.start) + k for k in range(min(int(space.n), 16))]
    if isinstance(space, spaces.MultiDiscrete):
        # A joint action: every agent taking the same action, each of the first 16.
        top = int(np.min(space.nvec))
        return [np.full(np.shape(space.nvec), k, dtype=space.dtype) for k in range(min(top, 16))]
    if isinstance(space, spaces.Box) and np.all(np.isfinite(space.low + space.high)):
        low, high = space.low, space.high
        return [low, ((low + high) / 2).astype(space.dtype), high]
    return []


def _machine(
    spec: PortSpec,
    reference: Reference,
    exchange: Exchange,
    backend: str,
    draws: Draws,
    endings: list[tuple[State, Any]],
    last: dict[str, Any],
    unheld: Unheld,
) -> type[RuleBasedStateMachine]:
    """The machine class; each instance Hypothesis makes is left in `last["machine"]`, where
    the run finds the log of the failing one."""
    states = state_strategy(spec, draws)
    actions = action_strategy(reference.action_space, draws)
    counts = _COUNTS
    # Only the NumPy contract autoresets; a JAX step after an episode's end is undefined.
    autoresets = backend == TargetName.NUMPY

    class Interaction(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.done = False
            self.log: list[str] = []
            last["machine"] = self
            profile.tick("sequences")  # Hypothesis makes one machine per sequence
            last.setdefault("readable", True)

        def _load(self, what: str) -> None:
            state = reference.read_state()

            def judge(answer: Any) -> None:
                self._compare_states(answer["state"], state, f"{what}, then state read", False)

            exchange(SessionLoad(states=_stack(state)), judge, self.log)
            self.done = False

        def _compare_states(
            self, read: dict | None, expected: State, what: str, free: bool
        ) -> None:
            if read is None:
                last["readable"] = False
                return
            diffs = field_diffs(spec, expected, _first(read), label="state.")
            if free:
                diffs = [d for d in diffs if not _within_free(spec, d)]
            if diffs:
                raise Divergent(diffs, expected, f"{what}: port state differs")

        def _inject(self, state: dict[str, np.ndarray], what: str) -> None:
            # Load means a fresh env given this state: hidden bookkeeping of the reference
            # (CartPole's steps past termination) starts over, as in L1 and L3.
            reference.reset(0)
            with reference_rejects():
                reference.write_state({**reference.read_state(), **state})
                reference.read_state()
            if not self._held(reference.read_state()):
                # A drawn state the port cannot hold (its `can_hold`): counted (a gap, or a
                # failure past the ceiling), and both sides start again from a reset.
                self.log.append("  the port cannot hold it: reset(seed=0) instead")
                reference.reset(0)
                what = "reset after a state the port cannot hold"
            self._load(what)

        def _held(self, state: State) -> bool:
            if last.get("holds") is False:
                return True  # the port has no `can_hold`: it holds every state
            held = held_rows(exchange.worker, _stack(state))
            last["holds"] = held is not None
            if exchange.recording:  # counted once, not again when the machine reruns live
                unheld.count(held, 1)
            return held is None or bool(held[0])

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
            self._inject(state, "state load")

        @precondition(lambda self: bool(endings))
        @rule(which=st.integers(0, max(0, len(endings) - 1)))
        def end_both_ways(self, which: int) -> None:
            state, action = endings[which]
            shown = {k: np.asarray(v).tolist() for k, v in state.items()}
            self.log.append(f"load_state({shown}) one step from ending both ways")
            self._inject(state, "state load")
            self.step(action)

        @precondition(lambda self: not self.done)
        @rule(action=actions)
        def step(self, action: Any) -> None:
            self.log.append(f"step({np.asarray(action).tolist()})")
            counts["steps"] += 1
            before = reference.read_state()
            with reference_rejects():
                out = reference.step(action)
                after = reference.read_state()
            noise = None if out.noise is None else out.noise[None]
            expected = Steps.single(out)

            def judge(answer: Any) -> None:
                found = divergent_steps(spec, expected, Steps.of(answer), True, np.asarray([0]))
                if found:
                    if not _undecidable(spec, reference, before, action, expected, found[0][1]):
                        raise Divergent(found[0][1], after, "step differs")
                    raise Undecided
                self._compare_states(answer["state"], after, "step, then state read", True)

            try:
                step = SessionStep(actions=np.asarray([action]), noise=noise)
                exchange(step, judge, self.log, before)
            except Undecided:
                # Both sides start over: the port may have ended where the reference did not.
                self.log.append(
                    "(the reference itself decides this step differently at "
                    "float32 resolution: not compared; reset)"
                )
                reference.reset(0)
                self._load("reset")
                return
            self.done = out.terminated or out.truncated

        @precondition(lambda self: self.done and autoresets)
        @rule(action=actions)
        def step_after_end(self, action: Any) -> None:
            self.log.append(f"step_after_end({np.asarray(action).tolist()})")

            def judge(answer: Any) -> None:
                # Next-step autoreset: the step after an end starts over and reports nothing.
                # (A game's reward is one per player: every one must be 0.)
                wrong = [
                    FieldDiff(
                        field=name, expected=want, actual=np.asarray(answer[name])[0].tolist()
                    )
                    for name, want in (("reward", 0.0), ("terminated", False), ("truncated", False))
                    if np.any(np.asarray(answer[name])[0] != want)
                ]
                if wrong:
                    raise Divergent(wrong, {}, "the step after an episode's end did not autoreset")

            exchange(SessionStep(actions=np.asarray([action])), judge, self.log)
            # The reference cannot follow the port's own reset: re-synchronise both.
            reference.reset(0)
            self._load("autoreset, then reset and state load")

    if spec.game is None:
        return Interaction

    class GameInteraction(Interaction):
        """A game's sequences also play legal moves: uniform actions over a large action
        space are nearly all illegal (20 of chess's 4672 at the start), so without this
        rule a sequence rarely gets past its first move and the state reads after a
        played move (the repetition record, castling rights) are seldom compared."""

        @precondition(lambda self: not self.done)
        @rule(pick=st.integers(0, 2**16))
        def step_legal(self, pick: int) -> None:
            legal = reference.legal_actions()
            if legal:
                self.step(legal[pick % len(legal)])

    return GameInteraction


def _undecidable(
    spec: PortSpec,
    reference: Reference,
    before: State,
    action: Any,
    expected: Steps,
    diffs: list[FieldDiff],
) -> bool:
    """Every differing output is one the reference changes itself when the start state
    moves by float32 resolution (see landing.py)."""
    if spec.randomness is not None:
        return False

    def changed(moved: State, transition: Transition, after: State) -> set[str]:
        again = divergent_steps(spec, expected, Steps.single(transition), True, np.asarray([0]))
        return {d.field for _, found in again for d in found}

    return {d.field for d in diffs} <= unresolved(reference, before, action, 0, 0, changed)


def _within_free(spec: PortSpec, diff: FieldDiff) -> bool:
    if diff.difference is None:
        return False
    atol, rtol = spec.tolerance_for(diff.field.removeprefix("state.")).bounds(free_running=True)
    return diff.difference <= atol + rtol * abs(float(diff.expected))


def check_interaction(
    spec: PortSpec,
    reference: Reference,
    worker: Requester,
    backend: str,
    examples: int,
    replay: str,
    shrink: bool = True,
    draws: Draws | None = None,
    holds_all: bool = False,
) -> LevelResult:
    """The machine's sequences, first played on the reference alone with every request to
    the port kept, then sent to the worker as one script and judged; when one differs, the
    machine runs again live, request by request, so that Hypothesis can shrink it."""
    started = time.perf_counter()
    draws = draws or draws_for(spec, reference)
    endings = ending_starts(spec, reference, _search_actions(reference.action_space), 0)
    # `holds` False: the port has no `can_hold`, known before (l2/warm.py), so the drawing
    # never waits on the worker.
    last: dict[str, Any] = {"holds": False} if holds_all else {}
    exchange = Exchange(worker)
    unheld = Unheld("l2.interaction", spec.levels.unheld_ceiling)
    machine = _machine(spec, reference, exchange, backend, draws, endings, last, unheld)
    settings = hypothesis_settings(examples, shrink)
    settings = type(settings)(settings, derandomize=True, stateful_step_count=spec.levels.l2.steps)
    level = LevelResult(level="l2", mode="interaction", passed=True, episodes=examples)
    _COUNTS["steps"] = 0
    exchange.recording = True
    try:
        _run_machine(machine, settings)
    finally:
        exchange.recording = False
    steps = _COUNTS["steps"]
    failure = judged(exchange, worker)
    # (A raise in the script has no log: the machine runs again live to find its sequence.)
    if failure is not None and not shrink and isinstance(failure[0], Divergent) and failure[1]:
        _diverged(level, failure[0], failure[1], replay)
    elif failure is not None:
        last.clear()
        _COUNTS["steps"] = 0
        try:
            _run_machine(machine, settings)
        except Divergent as found:
            _diverged(level, found, last["machine"].log if "machine" in last else [], replay)
        except Flaky as error:
            level.passed = False
            level.divergences.append(
                Divergence(level="l2", mode="interaction", message=f"not reproducible: {error}")
            )
        else:
            # Every sequence passes live: what failed was the script of all of them.
            if isinstance(failure[0], Divergent):
                note = " (sent as one script; live it passes)"
                _diverged(level, failure[0], failure[1], replay, note)
        steps = _COUNTS["steps"]
    level.steps_compared = steps
    if not last.get("readable", True):
        level.gaps.append(
            Gap(
                check="l2.interaction",
                kind=GapKind.NO_STATE_READS,
                detail="the port has no `state_to_reference`, so the state it holds after a "
                "step or a load is never compared; only observations, rewards and endings are",
            )
        )
    unheld.report(level)
    level.seconds = {"total": time.perf_counter() - started}
    return level


def _run_machine(machine: type[RuleBasedStateMachine], settings: Any) -> None:
    try:
        with (
            shrink_time_limit(),
            captured_reports(),
            draws_independent_of_the_process(),
        ):
            run_state_machine_as_test(machine, settings=settings)
    except PortGone as gone:
        raise gone.error from None
    except Unsatisfiable:
        raise unsatisfiable("l2.interaction") from None


def _diverged(
    level: LevelResult, failure: Divergent, steps: list[str], replay: str, note: str = ""
) -> None:
    level.passed = False
    level.diverged_episodes = 1
    level.divergences.append(
        Divergence(
            level="l2",
            mode="interaction",
            step=len(steps) - 1,
            start_state={k: np.asarray(v).tolist() for k, v in failure.inputs.items()},
            action_prefix=steps,
            fields=failure.diffs,
            message=f"{failure} after: {'; '.join(steps)}{note}",
            replay=replay,
        )
    )
