"""What every L1 check shares: the run (`L1Run`), one drawn input as the reference took it
(`Example`, `reference_example`), the checks of rows built on the reference (`rows_check`),
the batch that steps each state twice (`stepped_twice`, `answered_alike`) and an L1
divergence with its replay line (`l1_divergence`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from envport.errors import PortRaised
from envport.io import profile
from envport.serve import ops
from envport.serve.ops import Requester
from envport.spec import PortSpec
from envport.targets.randomness import example_seed, noise_args
from envport.targets.reference import Reference, State, Transition
from envport.verifiers.draws.rejects import reference_rejects
from envport.verifiers.draws.strategies import Draws, draws_for
from envport.verifiers.reporting.compare import STEP_FIELDS
from envport.verifiers.reporting.divergence import Divergence, FieldDiff, LevelResult
from envport.verifiers.reporting.replay import Replay
from envport.verifiers.reporting.states import port_words, shortest_raising, stack_states


@dataclass
class L1Run:
    spec: PortSpec
    reference: Reference
    worker: Requester
    backend: str | None
    examples: int
    seed: int
    replay: Replay
    shrink: bool = True
    draws: Draws | None = None  # edge and out-of-range draws (None: read from the reference)
    # The examples of a check without `arrange`, as the reference answered them: every such
    # check draws the same ones (same seed, same strategies), so they are drawn once.
    drawn: list[Example] | None = None

    def __post_init__(self) -> None:
        if self.draws is None:
            self.draws = draws_for(self.spec, self.reference)


def rows_check(
    run: L1Run,
    entry: str,
    mode: str,
    build: Callable[[], list[Any]],
    judge: Callable[[LevelResult, list[Any]], None],
) -> LevelResult:
    """An L1 check of rows built on the reference (landings, a game's endings): each row
    (a `before` state and an `action`) one compared step, judged together, timed. A port
    that raises fails the check on the first row it raises on."""
    started = time.perf_counter()
    level = LevelResult(level="l1", mode=mode, passed=True)
    rows = build()
    level.episodes = level.steps_compared = len(rows)
    if rows:
        try:
            judge(level, rows)
        except PortRaised as error:
            row, error = _first_raise(judge, rows, error)
            level.passed, level.diverged_episodes = False, 1
            level.divergences = [
                l1_divergence(run, mode, entry, row.before, row.action, [], port_words(error))
            ]
    level.seconds = {"total": time.perf_counter() - started}
    return level


def _first_raise(
    judge: Callable[[LevelResult, list[Any]], None], rows: list[Any], error: PortRaised
) -> tuple[Any, PortRaised]:
    """The row ending the shortest prefix of `rows` the port raises on (by bisection: a
    few requests, whatever the rows' number), with its error; the last row and the whole
    batch's error when the port raises only on all of them together."""

    def raises(count: int) -> PortRaised | None:
        try:
            judge(LevelResult(level="l1", passed=True), rows[:count])
        except PortRaised as failure:
            return failure
        return None

    count, found = shortest_raising(len(rows), error, raises)
    return rows[count - 1], found


@dataclass
class Example:
    """One drawn input, as the reference took it."""

    before: dict[str, np.ndarray]
    action: Any
    transition: Transition
    after: dict[str, np.ndarray]

    @property
    def draw_seed(self) -> int:
        return example_seed(self.before, self.action)

    def inputs(self) -> dict[str, Any]:
        return {**self.before, "action": self.action, **noise_args(self.transition.noise)}


def reference_example(run: L1Run, state: dict[str, np.ndarray], action: Any) -> Example:
    """Reset, inject the drawn state, step once: the reference's answer for this input."""
    profile.tick("examples")  # one per drawn example: the check's progress
    run.reference.reset(run.seed)
    current = run.reference.read_state()
    with reference_rejects():
        run.reference.write_state({**current, **state})
        before = run.reference.read_state()
        # A stochastic reference draws from a stream that is a function of the example.
        run.reference.reseed_draws(example_seed(before, action))
        transition = run.reference.step(action)
        after = run.reference.read_state()
    return Example(before, action, transition, after)


def l1_divergence(
    run: L1Run,
    mode: str,
    module: str | None,
    before: dict[str, Any],
    action: Any,
    fields: list[FieldDiff],
    message: str,
) -> Divergence:
    """An L1 divergence: one step from `before` by `action`, with the line replaying it."""
    return Divergence(
        level="l1",
        mode=mode,
        module=module,
        seed=run.seed,
        start_state={k: np.asarray(v).tolist() for k, v in before.items()},
        action_prefix=[np.asarray(action).tolist()],
        fields=fields,
        message=message,
        replay=run.replay.at(module=module or "").command(),
        replay_of=run.replay.at(module=module or ""),
    )


def stepped_twice(befores: list[State], actions: list[Any], noises: list[Any]) -> ops.StepBatch:
    """One batch stepping each state twice, rows i and n + i (`answered_alike` compares
    them): L1's examples and its rows built on the reference go to the port this way."""
    noise = None if noises[0] is None else np.stack([np.asarray(n) for n in noises * 2])
    return ops.StepBatch(
        states=stack_states(befores * 2), actions=np.asarray(actions * 2), noise=noise
    )


def answered_alike(answer: dict, index: int, count: int) -> bool:
    """Whether row `index` of a `stepped_twice` batch of `count` states got the same answer
    both times (exactly: a deterministic port repeats itself)."""
    return all(
        np.array_equal(answer[k][index], answer[k][index + count], equal_nan=True)
        for k in STEP_FIELDS
    )


# Said when a step's two answers in one batch differ and nothing points elsewhere.
NOT_DETERMINISTIC = "the same step twice gave different answers"


def unlike_twins(run: L1Run, example: Example) -> str:
    """Why one step got two answers in one batch. The port is asked once more, the same
    step three times in one batch: when the first two agree and the last differs, the
    fault is the batch's last env (a port that drops or mishandles its last row), not
    determinism. Only a failure pays for this request."""
    noise = example.transition.noise
    batch = stepped_twice([example.before] * 3, [example.action] * 3, [noise] * 3)
    # Three rows, not six: the same step in envs 0, 1 and 2 of one batch.
    answer = run.worker.request(
        ops.StepBatch(
            states={k: v[:3] for k, v in batch.states.items()},
            actions=batch.actions[:3],
            noise=None if batch.noise is None else batch.noise[:3],
        )
    )

    def alike(a: int, b: int) -> bool:
        return all(np.array_equal(answer[k][a], answer[k][b], equal_nan=True) for k in STEP_FIELDS)

    if alike(0, 1) and not alike(1, 2):
        return (
            "the last env of a batch answered otherwise than the same step in the envs before "
            "it (3 copies of one step in one batch: envs 0 and 1 agree, env 2 differs): the "
            "port mishandles its batch's size, dropping or misreading the last env"
        )
    return NOT_DETERMINISTIC
