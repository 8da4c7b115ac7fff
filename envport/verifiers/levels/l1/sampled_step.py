"""l1.sampled_step: a stochastic env's step as users call it, drawing its own noise.

L1 to L3 feed the reference's recorded noise into the port's `step_given_noise`, and the
sampler check (l1.noise) tests `sample_noise` alone; neither calls the port's `step`, which
is what a user trains on. A port whose `step` never slips, or samples its own way instead
of composing the two, passes both. Two checks close that:

1. Composition, exactly: the contract says step(key, s, a) == step_given_noise(
   sample_noise(key, s, a), s, a) (JAX), and VectorEnv.step(a) == step_given_noise(a,
   sample_noise(a)) from the same state and generator (NumPy). The worker runs both sides
   on the same keys (JAX) or on two envs reset with the same seed and loaded with the same
   states (NumPy); every output must be equal.
2. Distribution, end to end (no noise mapping involved): the reference plays uniform-random
   episodes and CONDITIONS distinct (state, action) pairs are taken from them; from each,
   the reference steps m times afresh (injected, its own draws) and the port's `step` m
   times (its own keys or generator), n = CONDITIONS * m per side with n the spec's
   `[randomness]` design (as for l1.noise). Every outcome component (observation, reward,
   terminated, truncated) is compared as two samples (envport.verifiers.stats.sample_compare:
   exact for constants, chi-square, KS, support), per condition and pooled, each at half the
   spec's alpha (per condition Bonferroni over the conditions). Pooled alone would miss what
   a symmetric policy averages out: under uniform actions FrozenLake's slips only rotate the
   direction, so a step that never slips moves to the same cells just as often.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from envport.serve.client import PortWorker
from envport.serve.ops import SampleStep
from envport.spec import PortSpec
from envport.targets.randomness import example_seed
from envport.targets.reference import Reference
from envport.targets.registry import TargetName
from envport.verifiers.levels.l1 import noise as noise_check
from envport.verifiers.reporting.divergence import Divergence, FieldDiff, LevelResult
from envport.verifiers.reporting.states import stack_states
from envport.verifiers.stats import sample_compare

NAMES = ("obs", "reward", "terminated", "truncated")
CONDITIONS = 16
# Conditions come from episodes apart from the sampler check's.
FIRST_EPISODE = 2 * 10**6
STREAM_OFFSET = 8_123_000


def _conditions(reference: Reference, seed: int) -> tuple[list[dict[str, np.ndarray]], list[Any]]:
    """CONDITIONS distinct (state, action) pairs, in the order uniform-random play meets them."""
    states, actions, _ = noise_check.play_conditions(
        reference, 50 * CONDITIONS, seed, first=FIRST_EPISODE
    )
    chosen: dict[int, int] = {}
    for index, (state, action) in enumerate(zip(states, actions, strict=True)):
        chosen.setdefault(example_seed(state, action), index)
        if len(chosen) == CONDITIONS:
            break
    picked = list(chosen.values())
    return [states[i] for i in picked], [actions[i] for i in picked]


def _reference_outcomes(
    reference: Reference, states: list[dict], actions: list[Any], seed: int
) -> dict[str, np.ndarray]:
    """One fresh reference step per row, all drawing from one seeded stream."""
    start = seed * 100_003 + STREAM_OFFSET
    reference.reset(start)
    reference.reseed_draws(start)
    outcomes: dict[str, list] = {name: [] for name in NAMES}
    for state, action in zip(states, actions, strict=True):
        # A fresh env given this state (hidden bookkeeping starts over, as in L1), reset to
        # one seed (an unseeded Crafter reset generates a new world, 1.4 s) with the draws
        # continuing the stream.
        reference.fresh(start, state)
        out = reference.step(action)
        for name in NAMES:
            outcomes[name].append(getattr(out, name))
    return {name: np.array(values) for name, values in outcomes.items()}


def _outcome_columns(spec: PortSpec, outcome: dict[str, Any]) -> dict[str, np.ndarray]:
    found = sample_compare.columns("obs", np.asarray(outcome["obs"]), spec)
    return found | {name: np.asarray(outcome[name]).reshape(-1) for name in NAMES[1:]}


def check_sampled_step(
    spec: PortSpec,
    reference: Reference,
    worker: Any,
    backend: str,
    seed: int,
    replay: str,
    module: str | None = None,
) -> LevelResult:
    started = time.perf_counter()
    config = spec.randomness
    assert config is not None
    level = LevelResult(level="l1", mode="sampled_step", passed=True)
    n, how = noise_check.sample_size(spec, reference, seed)
    conditions, condition_actions = _conditions(reference, seed)
    repeat = -(-n // len(conditions))
    states = [s for s in conditions for _ in range(repeat)]
    actions = [a for a in condition_actions for _ in range(repeat)]
    request = SampleStep(states=stack_states(states), actions=np.asarray(actions), seed=seed)
    # Sent before the reference steps its side, received after: a JAX port compiles and
    # runs its sampled step (seconds) while the driver steps the reference (seconds too).
    ahead = isinstance(worker, PortWorker)
    if ahead:
        worker.send(request)
    expected = _outcome_columns(spec, _reference_outcomes(reference, states, actions, seed))
    answer = worker.receive() if ahead else worker.request(request)
    got = _outcome_columns(spec, answer["step"])
    level.episodes = len(conditions)
    level.steps_compared = len(actions)
    composition = _composition(answer, states, actions, backend)
    if composition is not None:
        composition.module, composition.seed, composition.replay = module, seed, replay
        level.divergences.append(composition)
    half = config.alpha / 2
    pooled = sample_compare.compare_all(
        spec, expected, got, half, config.shift, config.power, exact_constants=False
    )
    level.statistics = {v.name: sample_compare.verdict_fields(v) for v in pooled}
    level.statistics["sample_size"] = f"{how}; {len(conditions)} conditions x {repeat}"
    for verdict in pooled:
        if not verdict.passed:
            level.divergences.append(_divergence(verdict, "pooled over the conditions", {}))
    least = 1.0
    for index, (state, action) in enumerate(zip(conditions, condition_actions, strict=True)):
        rows = slice(index * repeat, (index + 1) * repeat)
        # Per condition the outcome's components go together (a slip decides the next
        # cell and the reward): compared jointly too, not only one by one.
        joint_expected, joint_got = sample_compare.with_joint(
            {k: v[rows] for k, v in expected.items()}, {k: v[rows] for k, v in got.items()}
        )
        verdicts = sample_compare.compare_all(
            spec,
            joint_expected,
            joint_got,
            half / len(conditions),
            config.shift,
            config.power,
            exact_constants=False,
        )
        least = min([least, *(v.p_value for v in verdicts if v.p_value is not None)])
        failed = next((v for v in verdicts if not v.passed), None)
        if failed is not None:
            condition = {**state, "action": action}
            level.divergences.append(_divergence(failed, f"from condition {index}", condition))
    level.statistics["per_condition"] = {
        "conditions": len(conditions),
        "samples_per_side": repeat,
        "alpha": half / len(conditions),
        "least_p_value": least,
    }
    for divergence in level.divergences:
        divergence.module, divergence.seed, divergence.replay = module, seed, replay
    level.passed = not level.divergences
    level.diverged_episodes = len(level.divergences)
    level.note = (
        f"{len(actions)} sampled steps per side, {len(conditions)} conditions x {repeat} "
        f"({how}); outcome compared per condition and pooled at alpha {config.alpha:g}; step "
        + ("does not compose" if composition is not None else "composes")
        + " sample_noise with step_given_noise"
        + (f"; {len(level.divergences)} divergences" if level.divergences else "")
    )
    level.seconds = {"total": time.perf_counter() - started}
    return level


def _divergence(
    verdict: sample_compare.Verdict, where: str, condition: dict[str, Any]
) -> Divergence:
    return Divergence(
        level="l1",
        mode="sampled_step",
        start_state={k: np.asarray(v).tolist() for k, v in condition.items()},
        message=(
            f"{where}, the port's own step draws {verdict.name} from another distribution than "
            f"the reference's step: {verdict.problem}"
        ),
        fields=[FieldDiff(field=verdict.name, expected=verdict.reference, actual=verdict.port)],
    )


def _composition(
    answer: dict, states: list[dict], actions: list[Any], backend: str
) -> Divergence | None:
    """The first condition where step and the composed step disagree, if any."""
    sampled, composed = answer["step"], answer["composed"]
    differs = np.zeros(len(actions), dtype=bool)
    for name in NAMES:
        a, b = np.asarray(sampled[name]), np.asarray(composed[name])
        if a.shape != b.shape:
            differs[:] = True
            break
        differs |= ~_rows_equal(a, b)
    if not differs.any():
        return None
    row = int(np.flatnonzero(differs)[0])
    fields = [
        FieldDiff(
            field=name,
            expected=np.asarray(composed[name])[row].tolist(),
            actual=np.asarray(sampled[name])[row].tolist(),
        )
        for name in NAMES
        if np.asarray(sampled[name]).shape != np.asarray(composed[name]).shape
        or not np.array_equal(
            np.asarray(sampled[name])[row], np.asarray(composed[name])[row], equal_nan=True
        )
    ]
    if backend == TargetName.JAX:
        what = (
            "step(key, state, action) differs from step_given_noise(sample_noise(key, state, "
            "action), state, action) with the same key"
        )
    else:
        what = (
            "VectorEnv.step(actions) differs from step_given_noise(actions, sample_noise("
            "actions)) from the same state and seed"
        )
    return Divergence(
        level="l1",
        mode="sampled_step",
        start_state={
            **{k: np.asarray(v).tolist() for k, v in states[row].items()},
            "action": np.asarray(actions[row]).tolist(),
        },
        fields=fields,
        message=f"{int(differs.sum())} of {len(actions)} steps: {what} (the contract's identity)",
    )


def _rows_equal(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row by row, exactly equal (NaN equal to NaN)."""
    a, b = a.reshape(len(a), -1), b.reshape(len(b), -1)
    same = a == b
    if a.dtype.kind == "f" and b.dtype.kind == "f":
        same |= np.isnan(a) & np.isnan(b)
    return same.all(axis=1)
