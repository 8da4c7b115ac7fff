"""One step of a batch of any size, every env's outcome known from a few reference steps.

DISTINCT reference reset states step once, each with its own action; a batch of B envs is
those rows cycled (env i starts from row i % DISTINCT), built in the worker (`StepTiled`),
so the wire carries DISTINCT states whatever B: chess's state is 107 kB, and 8192 copies of
it would be 880 MB each way. The port answers for every env while the batch's observations
are small (CartPole's are 32k numbers at 8192 envs), else for a sample that still meets a
chunked port's mistakes: the first and last EDGE envs, both sides of every BOUNDARY-env
boundary (a tail lost past 1024 shows at env 1024), and RANDOM_KEPT envs drawn from the
seed. l2.sizes and `envport bench`'s check before it times a size both ask this.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from envport.errors import PortError
from envport.serve.ops import Requester, StepTiled
from envport.spec import PortSpec
from envport.targets.reference import Reference
from envport.verifiers.draws.action_range import ActionRange
from envport.verifiers.draws.policies import Planner
from envport.verifiers.reporting.compare import Steps, divergent_steps
from envport.verifiers.reporting.divergence import FieldDiff

# Prime, so the state an env holds falls differently against any chunk size.
DISTINCT = 61
SEED_OFFSET = 8_130_000
# Observation numbers an answer carries for every env; a larger batch answers a sample.
WHOLE_ANSWER = 1 << 22
EDGE = 64
BOUNDARY = 32
RANDOM_KEPT = 128


@dataclass
class SizeOutcome:
    """What one batch of `size` showed: the envs compared, and the first that differ."""

    size: int
    compared: int = 0
    # (env, differing fields) of each env that differs, in env order.
    differing: list[tuple[int, list[FieldDiff]]] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.differing

    def where(self) -> str:
        """Which env of the batch differs first, and how many do."""
        if not self.differing:
            return f"a batch of {self.size} steps as the reference's ({self.compared} envs)"
        return (
            f"env {self.differing[0][0]} of a batch of {self.size} differs from the "
            f"reference's step ({len(self.differing)} of {self.compared} envs compared "
            f"differ; the last at env {self.differing[-1][0]})"
        )

    def line(self) -> str:
        """`where`, with the first differing env's fields: one line for a table or a log."""
        if not self.differing:
            return self.where()
        diffs = self.differing[0][1]
        more = f"; and {len(diffs) - 3} more fields" if len(diffs) > 3 else ""
        return f"{self.where()}: {'; '.join(diff.line() for diff in diffs[:3])}{more}"


@dataclass
class DistinctSteps:
    """DISTINCT reference steps from reset states, stacked: any batch's expected outcome."""

    states: dict[str, np.ndarray]
    actions: np.ndarray
    noise: np.ndarray | None
    expected: Steps
    seed: int

    @classmethod
    def played(
        cls, reference: Reference, seed: int, outside: ActionRange | None = None
    ) -> DistinctSteps:
        planner = Planner(seed, outside=outside)
        space = reference.action_space
        states, actions, transitions = [], [], []
        for index in range(DISTINCT):
            reference.reset(seed * 100_003 + SEED_OFFSET + index)
            states.append(reference.read_state())
            action = np.asarray(next(iter(planner.actions("uniform", space, index, 1))))
            actions.append(action)
            transitions.append(reference.step(action.item() if action.ndim == 0 else action))
        noise = None
        if transitions[0].noise is not None:
            noise = np.stack([np.asarray(t.noise) for t in transitions])
        return cls(
            states={key: np.stack([s[key] for s in states]) for key in states[0]},
            actions=np.stack(actions),
            noise=noise,
            expected=Steps.join([Steps.single(t) for t in transitions]),
            seed=seed,
        )

    def start(self, env: int) -> tuple[dict[str, Any], Any]:
        """The state and action env `env` of any batch starts from."""
        row = env % DISTINCT
        return {k: v[row] for k, v in self.states.items()}, self.actions[row]

    def kept(self, size: int) -> np.ndarray:
        """The envs of a batch of `size` whose outputs the port answers and we compare."""
        width = max(1, self.expected.obs[0].size)
        if size * width <= WHOLE_ANSWER:
            return np.arange(size)
        boundaries = np.arange(BOUNDARY, size, BOUNDARY)
        drawn = np.random.default_rng([self.seed, size]).integers(0, size, RANDOM_KEPT)
        picked = [np.arange(EDGE), np.arange(size - EDGE, size), boundaries - 1, boundaries]
        return np.unique(np.concatenate([*picked, drawn]))

    def step(self, spec: PortSpec, worker: Requester, size: int) -> SizeOutcome:
        """One step of a batch of `size` envs, compared with the reference's outcomes. A
        port that fails on the batch raises its `PortError`, with the size named."""
        rows = np.arange(size) % DISTINCT
        kept = self.kept(size)
        request = StepTiled(
            states=self.states, actions=self.actions, rows=rows, kept=kept, noise=self.noise
        )
        outcome = SizeOutcome(size=size, compared=len(kept))
        try:
            answer = worker.request(request)
        except PortError as failure:
            # Of the same kind: a raise stays a raise (the check fails, the verify goes on).
            raise type(failure)(f"a batch of {size} envs: {failure}", failure.detail) from None
        picked = rows[kept]
        expected = Steps(*(np.take(part, picked, axis=0) for part in self.expected.parts()))
        actual = Steps.of(answer)
        if _identical(expected, actual):
            return outcome
        found = divergent_steps(spec, expected, actual, False, np.arange(len(kept)))
        outcome.differing = [(int(kept[index]), diffs) for index, diffs in found]
        return outcome


def _identical(expected: Steps, actual: Steps) -> bool:
    """Every output exactly the reference's: no field can differ, and the field-by-field
    comparison (a column per observation number: chess's 11,777 cost seconds a size) is
    skipped."""
    return all(
        got.dtype.kind in "biuf" and want.shape == got.shape and np.array_equal(want, got)
        for want, got in zip(expected.parts(), actual.parts(), strict=True)
    )
