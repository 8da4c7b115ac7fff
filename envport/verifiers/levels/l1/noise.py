"""The sampler check: does the port's `sample_noise` draw from the reference's distribution?

L1 to L3 feed the reference's own draws into the port's deterministic step, so they never
exercise the port's sampler. This check does: the reference plays uniform-random episodes
and each step's draws become one noise sample (through the spec's harness); the port then
samples noise for the very same (state, action) pairs. Under the null hypothesis both sides
draw from the same conditional distributions over the same conditions, so the pooled
samples are identically distributed and a two-sample test applies (chi-square for
categorical noise, Kolmogorov-Smirnov for continuous; envport.verifiers.stats.noise_stats), per
component and, for categorical noise of several components, on the first two jointly. The
sample size n is chosen before testing for the spec's stated shift, alpha and power, and
the report gives n, the statistic, the p-value and that power.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from envport.serve.ops import Requester, SampleNoise
from envport.spec import PortSpec
from envport.targets.reference import Reference
from envport.verifiers.draws.policies import plan_actions
from envport.verifiers.reporting.divergence import Divergence, FieldDiff, LevelResult
from envport.verifiers.reporting.states import stack_states
from envport.verifiers.stats import noise_stats

# The joint test of the first two noise components (categorical noise of several components).
PAIR = "noise[0, 1] jointly"
# Reference draws that estimate the categorical baseline the sample size is computed for.
PILOT = 1000
EPISODE_STEPS = 200
# Keeps the conditions apart from L3's episodes (which use reset seeds seed * 100_003 + i).
SEED_OFFSET = 7_919_000


def play_conditions(
    reference: Reference, count: int, seed: int, first: int
) -> tuple[list[dict], list[Any], list[np.ndarray]]:
    """`count` (state, action, noise) triples from uniform-random reference episodes."""
    states: list[dict] = []
    actions: list[Any] = []
    noise: list[np.ndarray] = []
    episode = first
    while len(noise) < count:
        reference.reset(seed * 100_003 + SEED_OFFSET + episode)
        for action in plan_actions(
            "uniform", reference.action_space, seed, SEED_OFFSET + episode, EPISODE_STEPS
        ):
            states.append(reference.read_state())
            actions.append(action)
            out = reference.step(action)
            noise.append(np.asarray(out.noise))
            if out.terminated or out.truncated or len(noise) == count:
                break
        episode += 1
    return states, actions, noise


def sample_size(spec: PortSpec, reference: Reference, seed: int) -> tuple[int, str]:
    """n per side, fixed before any port sample is drawn, and how it was chosen."""
    config = spec.randomness
    assert config is not None
    if config.samples is not None:
        return config.samples, "given by the spec"
    _, _, pilot = play_conditions(reference, PILOT, seed, first=10**6)
    values = np.stack(pilot).reshape(len(pilot), -1)
    alpha = config.alpha / values.shape[1]  # Bonferroni over noise components
    if config.noise == "continuous":
        n = noise_stats.ks_samples(config.shift, alpha, config.power)
        return n, f"DKW bound: power >= {config.power:g} against KS distance {config.shift:g}"
    assert config.categories is not None  # the spec requires it for categorical noise
    sizes = []
    for column in values.T:
        counts = np.bincount(column.astype(np.int64), minlength=config.categories)
        p0 = (counts + 0.5) / (counts.sum() + 0.5 * len(counts))
        sizes.append(noise_stats.chi_square_samples(p0, config.shift, alpha, config.power))
    return max(sizes), (
        f"power {config.power:g} against a {config.shift:g} shift of one category "
        f"(baseline from {PILOT} pilot draws)"
    )


def check_sampler(
    spec: PortSpec,
    reference: Reference,
    worker: Requester,
    seed: int,
    replay: str,
    module: str | None = None,
) -> LevelResult:
    started = time.perf_counter()
    config = spec.randomness
    assert config is not None
    level = LevelResult(level="l1", mode="noise", passed=True)
    n, how = sample_size(spec, reference, seed)
    states, actions, recorded = play_conditions(reference, n, seed, first=0)
    ref_noise = np.stack(recorded)
    answer = worker.request(
        SampleNoise(states=stack_states(states), actions=np.asarray(actions), seed=seed)
    )
    port_noise = np.asarray(answer["noise"])
    level.episodes = level.steps_compared = n
    if port_noise.shape != ref_noise.shape:
        return _contract(level, "noise.shape", list(ref_noise.shape), list(port_noise.shape))
    ref_columns = ref_noise.reshape(n, -1).T
    port_columns = port_noise.reshape(n, -1).T
    width = len(ref_columns)
    named = [
        ("noise" if width == 1 else f"noise[{i}]", r, p)
        for i, (r, p) in enumerate(zip(ref_columns, port_columns, strict=True))
    ]
    pair = config.noise == "categorical" and width > 1
    if pair:
        named.append(_first_pair(ref_columns, port_columns, config.categories or 1))
    alpha = config.alpha / len(named)  # Bonferroni over the tests
    results = []
    for name, ref_values, port_values in named:
        if config.noise == "categorical":
            assert config.categories is not None
            categories = config.categories ** (2 if name == PAIR else 1)
            outside = port_values[(port_values < 0) | (port_values >= categories)]
            if port_values.dtype.kind not in "iub" or outside.size:
                got = outside[0].item() if outside.size else str(port_values.dtype)
                return _contract(level, name, f"integers 0..{config.categories - 1}", got)
            result = noise_stats.chi_square_test(
                ref_values.astype(np.int64),
                port_values.astype(np.int64),
                categories,
                config.shift,
                alpha,
            )
        else:
            result = noise_stats.ks_test(ref_values, port_values, config.shift, alpha)
        results.append((name, result))
    level.statistics = {
        name: {
            "test": r.test,
            "samples_per_side": r.samples,
            "statistic": r.statistic,
            "p_value": r.p_value,
            "alpha": r.alpha,
            "design_shift": config.shift,
            "design_power": r.power,
        }
        for name, r in results
    } | {"sample_size": how}
    failed = [(name, r) for name, r in results if r.p_value < r.alpha]
    level.passed = not failed
    level.note = _summary(results, config.shift)
    for name, r in failed:
        level.diverged_episodes += 1
        level.divergences.append(
            Divergence(
                level="l1",
                mode="noise",
                module=module,
                seed=seed,
                message=(
                    f"the port's sample_noise draws {name} from another distribution than the "
                    f"reference: {_sentence(name, r, config.shift)}"
                ),
                fields=[_frequencies(name, ref_noise, port_noise, config.categories)]
                if config.noise == "categorical" and width == 1
                else [],
                replay=replay,
            )
        )
    level.seconds = {"total": time.perf_counter() - started}
    return level


def _first_pair(
    reference: np.ndarray, port: np.ndarray, categories: int
) -> tuple[str, np.ndarray, np.ndarray]:
    """The first two components as one categorical value: each component alone can be
    distributed right while they are drawn together wrong (cards dealt without replacement
    repeat a value less often), which only their joint distribution shows."""

    def joint(columns: np.ndarray) -> np.ndarray:
        first, second = columns[0].astype(np.int64), columns[1].astype(np.int64)
        # A value outside 0..categories-1 stays outside, for the contract check to name.
        inside = (first >= 0) & (first < categories) & (second >= 0) & (second < categories)
        return np.where(inside, first * categories + second, -1)

    return PAIR, joint(reference), joint(port)


# Beyond this many components the pass line names the least likely one, not each: a
# world's noise (Crafter's 1,017 numbers) made it a page long.
LISTED = 8


def _summary(results: list[tuple[str, noise_stats.TestResult]], shift: float) -> str:
    if len(results) <= LISTED:
        return "; ".join(_sentence(name, r, shift) for name, r in results)
    name, least = min(results, key=lambda item: item[1].p_value)
    return (
        f"{len(results)} components, each a two-sample test at alpha {least.alpha:g}; the "
        f"least likely: {_sentence(name, least, shift)}"
    )


def _sentence(name: str, r: noise_stats.TestResult, shift: float) -> str:
    return (
        f"{name}: {r.test} two-sample test, n = {r.samples} per side, statistic "
        f"{r.statistic:.4g}, p = {r.p_value:.3g} (alpha {r.alpha:g}; power {r.power:.3f} "
        f"against a {shift:g} shift)"
    )


def _frequencies(
    name: str, reference: np.ndarray, port: np.ndarray, categories: int | None
) -> FieldDiff:
    k = categories or 1
    ref = np.bincount(reference.reshape(-1).astype(np.int64), minlength=k) / reference.size
    got = np.bincount(port.reshape(-1).astype(np.int64), minlength=k) / port.size
    return FieldDiff(
        field=f"{name} frequencies",
        expected=[round(float(v), 4) for v in ref],
        actual=[round(float(v), 4) for v in got],
    )


def _contract(level: LevelResult, field: str, expected: Any, actual: Any) -> LevelResult:
    level.passed = False
    level.diverged_episodes = 1
    level.divergences.append(
        Divergence(
            level="l1",
            mode="noise",
            message="sample_noise breaks the noise contract",
            fields=[FieldDiff(field=field, expected=expected, actual=actual)],
        )
    )
    return level
