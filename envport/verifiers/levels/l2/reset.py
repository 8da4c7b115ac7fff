"""l2.reset: does the port's `reset` start where the reference's does?

Every other check starts the port from the reference's own state (state injection), so a
port whose reset draws from the wrong range, with the wrong sign or from the wrong
distribution passes them all; yet a user trains from the port's reset. Here the port's
worker draws n resets (JAX: `reset` over n keys; NumPy: VectorEnvs reset with seeds) and
the reference n (`reset(seed)` over seeds), and every component of the start state and of
the first observation is compared as two samples (envport.verifiers.stats.sample_compare): a
constant exactly, discrete ones by chi-square, continuous ones by Kolmogorov-Smirnov, plus
the support test at both ends; and jointly, through the sum and the alternating sum of
each group's standardised components (a state field's, the observation's). n is fixed
by the design in envport.verifiers.stats.reset_sample before any port draw is seen. NumPy's
seeding contract is checked on the way: the same seed twice gives the same observations,
and two seeds do not give identical ones.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from envport.gaps import Gap, GapKind
from envport.serve.ops import ResetSamples
from envport.spec import PortSpec
from envport.verifiers.reporting.compare import contract_problems, unpadded
from envport.verifiers.reporting.divergence import Divergence, FieldDiff, LevelResult
from envport.verifiers.stats import sample_compare
from envport.verifiers.stats.reset_sample import ALPHA, POWER, SHIFT, ResetSample, state_columns

# NumPy: the port's draws come from VectorEnvs of this many envs, seeds seed, seed + 1, ...
CHUNK = 1024


def check_reset(
    spec: PortSpec, worker: Any, sample: ResetSample, seed: int, replay: str
) -> LevelResult:
    started = time.perf_counter()
    level = LevelResult(level="l2", mode="reset", passed=True, episodes=sample.n)
    answer = worker.request(ResetSamples(count=sample.n, seed=seed, chunk=CHUNK))
    port_obs = np.asarray(answer["obs"])
    readable = answer["state"] is not None
    problems = contract_problems(sample.obs, port_obs)
    if len(port_obs) != sample.n:
        problems.append(FieldDiff(field="obs.count", expected=sample.n, actual=len(port_obs)))
    if problems:
        return _fail(level, "the observation reset returns breaks the contract", problems, replay)
    port = sample_compare.columns("obs", port_obs, spec)
    if readable:
        port |= state_columns(spec, answer["state"])
    # Per component, and jointly where cheap: projections of each group of components.
    expected, port = sample_compare.with_joint(sample.columns(spec, with_state=readable), port)
    # A sample of the spec's size held constant by a few hundred resets is no proof of a
    # constant: a value of a few in a thousand may not have come up (a generated world's
    # cell), so port draws off it are judged by their count, not one by one.
    exact = spec.levels.l2.reset_samples is None
    verdicts = sample_compare.compare_all(spec, expected, port, ALPHA, SHIFT, POWER, exact)
    level.steps_compared = sample.n
    level.statistics = {v.name: sample_compare.verdict_fields(v) for v in verdicts}
    level.statistics["sample_size"] = sample.how
    for verdict in verdicts:
        if not verdict.passed:
            level.divergences.append(
                Divergence(
                    level="l2",
                    mode="reset",
                    seed=seed,
                    message=(
                        f"the port's reset draws {verdict.name} from another distribution than "
                        f"the reference: {verdict.problem}"
                    ),
                    fields=[
                        FieldDiff(
                            field=verdict.name, expected=verdict.reference, actual=verdict.port
                        )
                    ],
                    replay=replay,
                )
            )
    if "again" in answer:
        # (The padding of agents observing fewer components is not the port's observation.)
        again = unpadded(spec, np.asarray(answer["again"]))
        _seeding(level, sample, unpadded(spec, port_obs), again, verdicts, replay)
    level.passed = not level.divergences
    level.diverged_episodes = len(level.divergences)
    constant = sum(v.kind == "constant" for v in verdicts)
    failed = [v.name for v in verdicts if not v.passed]
    level.note = (
        f"{sample.n} resets per side, {len(verdicts)} components ({constant} constant, compared "
        f"{'exactly' if exact else 'by the count of port draws off them'}; the rest two-sample "
        f"tests and support at family alpha {ALPHA:g})"
        + ("" if readable else "; no state_to_reference: observations only")
        + (f"; differ: {', '.join(failed)}" if failed else "")
    )
    if not level.passed and not failed:
        level.note += f"; {level.divergences[0].message}"
    if not readable:
        level.gaps.append(
            Gap(
                check="l2.reset",
                kind=GapKind.OBSERVATIONS_ONLY,
                detail="the port has no `state_to_reference`, so its reset states are compared "
                "through observations only (state the observation hides is not checked)",
            )
        )
    level.seconds = {"total": time.perf_counter() - started}
    return level


def _seeding(
    level: LevelResult,
    sample: ResetSample,
    obs: np.ndarray,
    again: np.ndarray,
    verdicts: list[sample_compare.Verdict],
    replay: str,
) -> None:
    """Gymnasium's seeding contract: reset(seed) is reproducible, and a seed changes it."""
    first = obs[: len(again)]
    if again.shape != first.shape or not np.array_equal(again, first, equal_nan=True):
        level.divergences.append(
            Divergence(
                level="l2",
                mode="reset",
                message="reset(seed=s) twice gave different observations: the seed does not "
                "determine the reset",
                replay=replay,
            )
        )
    random = any(v.kind != "constant" and v.name.startswith("obs") for v in verdicts)
    second = obs[CHUNK : 2 * CHUNK]
    width = min(len(second), len(first))
    if random and width and np.array_equal(first[:width], second[:width]):
        level.divergences.append(
            Divergence(
                level="l2",
                mode="reset",
                message="reset(seed=s) and reset(seed=s + 1) gave the same observations: the "
                "seed is ignored",
                replay=replay,
            )
        )


def _fail(level: LevelResult, message: str, fields: list[FieldDiff], replay: str) -> LevelResult:
    level.passed = False
    level.diverged_episodes = 1
    level.divergences.append(
        Divergence(level="l2", mode="reset", message=message, fields=fields, replay=replay)
    )
    level.note = message
    return level
