"""Explicit randomness: the recording proxy, the noise mapping, and the sampler's test.

FrozenLake (slippery) is the stochastic example: its port draws which way the agent slips
(`sample_noise`) apart from the deterministic rest (`step_given_noise`).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from envport.errors import SpecError
from envport.spec import load_spec
from envport.targets.randomness import RecordingGenerator, example_seed
from envport.targets.reference import Reference
from envport.verifiers.selfcheck import apply_mutant, load_mutants
from envport.verifiers.stats import noise_stats
from envport.verifiers.verify import VerifyOptions, verify

from helpers import CARTPOLE, ROOT

FROZENLAKE = ROOT / "examples" / "frozenlake"


def test_the_proxy_passes_draws_through_and_records_them() -> None:
    plain = np.random.default_rng(7)
    proxy = RecordingGenerator(np.random.default_rng(7))
    assert proxy.random() == plain.random()
    assert np.array_equal(proxy.uniform(-1, 1, size=3), plain.uniform(-1, 1, size=3))
    assert proxy.integers(10) == plain.integers(10)
    assert [d.method for d in proxy.draws] == ["random", "uniform", "integers"]
    assert proxy.draws[1].kwargs == {"size": 3} and proxy.draws[1].value.shape == (3,)
    assert proxy.bit_generator is proxy.inner.bit_generator  # attributes pass through


def test_a_deterministic_reference_records_nothing() -> None:
    reference = Reference(load_spec(CARTPOLE))
    reference.reset(0)
    assert reference.recorder is None
    assert reference.step(1).noise is None


def test_recorded_noise_is_the_transition_the_reference_took() -> None:
    """The harness maps each step's uniform draw to the index of the candidate transition;
    that index must name the cell the reference actually moved to."""
    reference = Reference(load_spec(FROZENLAKE))
    table = reference.env.unwrapped.P
    rng = np.random.default_rng(0)
    seen = set()
    for episode in range(60):
        reference.reset(episode)
        for _ in range(30):
            before = int(reference.read_state()["s"])
            action = int(rng.integers(4))
            out = reference.step(action)
            transitions = table[before][action]
            if len(transitions) == 3:
                assert transitions[int(out.noise)][1] == int(out.obs)
                seen.add(int(out.noise))
            if out.terminated or out.truncated:
                break
    assert seen == {0, 1, 2}


def test_a_failing_harness_is_one_line_naming_the_key(tmp_path: Path) -> None:
    copy = tmp_path / "frozenlake"
    shutil.copytree(FROZENLAKE, copy, ignore=shutil.ignore_patterns("ports", "replay"))
    (copy / "harness" / "noise.py").write_text(
        "def noise_from_draws(draws, before, action, env):\n    return draws[5].value\n"
    )
    reference = Reference(load_spec(copy))
    reference.reset(0)
    with pytest.raises(SpecError) as error:
        reference.step(1)
    message = str(error.value)
    assert "randomness.harness" in message and "draws [random]" in message
    assert "\n" not in message


def test_example_seeds_are_a_function_of_the_example() -> None:
    state = {"s": np.asarray(5), "elapsed_steps": np.asarray(3)}
    assert example_seed(state, 2) == example_seed(dict(state), 2)
    assert example_seed(state, 2) != example_seed(state, 1)


# ---- the statistics ----


def test_chi_square_sample_size_gives_the_stated_power() -> None:
    p0 = np.ones(3) / 3
    n = noise_stats.chi_square_samples(p0, shift=0.05, alpha=0.01, power=0.95)
    assert noise_stats.chi_square_design_power(p0, 0.05, n, 0.01) >= 0.95
    assert noise_stats.chi_square_design_power(p0, 0.05, n - 1, 0.01) < 0.95
    assert 3000 < n < 5000  # for the record: n = 3799 per side


def test_chi_square_rejects_a_five_point_shift_and_not_an_identical_sampler() -> None:
    rng = np.random.default_rng(1)
    n = 3799
    same = noise_stats.chi_square_test(
        rng.integers(3, size=n), rng.integers(3, size=n), 3, 0.05, 0.01
    )
    shifted = noise_stats.chi_square_test(
        rng.integers(3, size=n), rng.choice(3, size=n, p=[0.30833, 0.38333, 0.30834]), 3, 0.05, 0.01
    )
    assert same.p_value > 0.01 and shifted.p_value < 0.01
    assert shifted.power >= 0.94 and shifted.samples == n


def test_ks_sample_size_from_the_dkw_bound() -> None:
    n = noise_stats.ks_samples(shift=0.05, alpha=0.01, power=0.95)
    assert noise_stats.ks_power_bound(0.05, n, 0.01) >= 0.95
    assert noise_stats.ks_power_bound(0.05, n - 50, 0.01) < 0.95
    rng = np.random.default_rng(2)
    same = noise_stats.ks_test(rng.random(n), rng.random(n), 0.05, 0.01)
    moved = noise_stats.ks_test(rng.random(n), rng.random(n) ** 1.25, 0.05, 0.01)
    assert same.p_value > 0.01 and moved.p_value < 0.01


# ---- the sampler check in `envport verify` ----


@pytest.mark.slow
def test_the_known_good_sampler_passes_and_reports_its_design() -> None:
    report = verify(
        str(FROZENLAKE),
        str(FROZENLAKE / "ports" / "numpy"),
        VerifyOptions(levels=("l1",), examples=30),
    )
    assert report.passed, report.text()
    noise = next(level for level in report.levels if level.name == "l1.noise")
    stats = noise.statistics["noise"]
    assert stats["test"] == "chi-square" and stats["p_value"] > stats["alpha"] == 0.01
    assert stats["design_power"] >= 0.95 and stats["samples_per_side"] > 3000
    assert "n = " in noise.summary() and "power" in noise.summary()


@pytest.mark.slow
def test_a_slip_probability_five_points_off_is_caught_by_the_sampler_test(
    tmp_path: Path,
) -> None:
    mutant = next(m for m in load_mutants(FROZENLAKE) if m.id == "numpy-slip-probability")
    port = apply_mutant(mutant, FROZENLAKE / "ports" / "numpy", tmp_path / "numpy")
    report = verify(
        str(FROZENLAKE), str(port), VerifyOptions(target="numpy", examples=30, episodes=30)
    )
    failed = {level.name for level in report.levels if not level.passed}
    # Only the sampler changed: the deterministic step, fed the reference's draws, agrees.
    assert failed == {"l1.noise"}, report.text()
    noise = next(level for level in report.levels if level.name == "l1.noise")
    assert noise.statistics["noise"]["p_value"] < 0.01
    divergence = noise.divergences[0]
    assert divergence.fields[0].field == "noise frequencies"
    assert "--levels l1" in divergence.replay and divergence.replay.endswith("--module env")


@pytest.mark.slow
def test_a_bug_in_the_deterministic_step_is_caught_by_l1_with_recorded_noise(
    tmp_path: Path,
) -> None:
    mutant = next(m for m in load_mutants(FROZENLAKE) if m.id == "numpy-slip-direction")
    port = apply_mutant(mutant, FROZENLAKE / "ports" / "numpy", tmp_path / "numpy")
    report = verify(
        str(FROZENLAKE), str(port), VerifyOptions(target="numpy", levels=("l1",), examples=60)
    )
    failed = {level.name for level in report.levels if not level.passed}
    assert "l1.lake.transition" in failed and "l1.noise" not in failed
    divergence = next(level for level in report.levels if level.name == "l1.lake.transition")
    assert "noise" in divergence.divergences[0].start_state


@pytest.mark.slow
def test_reference_workers_carry_each_steps_noise_to_l3() -> None:
    # Without the reference's noise the port would slip its own way and diverge at once.
    report = verify(
        str(FROZENLAKE),
        str(FROZENLAKE / "ports" / "numpy"),
        VerifyOptions(levels=("l3",), episodes=60, workers=2),
    )
    assert report.passed, report.text()
    # Every rollout level compared many steps (l3.plain samples 64 of them, by design).
    assert all(level.steps_compared > 100 for level in report.levels if level.mode != "plain")


def test_a_wide_noise_passes_in_one_line_naming_its_least_likely_component() -> None:
    from envport.verifiers.levels.l1 import noise as l1_noise

    rng = np.random.default_rng(0)
    results = [
        (f"noise[{i}]", noise_stats.ks_test(rng.random(200), rng.random(200), 0.05, 1e-4))
        for i in range(40)
    ]
    least = min(results, key=lambda item: item[1].p_value)[0]
    note = l1_noise._summary(results, 0.05)
    assert note.startswith("40 components") and f"{least}:" in note
    assert note.count("two-sample test") == 2  # the summary and the one component named
    few = l1_noise._summary(results[:3], 0.05)
    assert all(f"noise[{i}]:" in few for i in range(3))
