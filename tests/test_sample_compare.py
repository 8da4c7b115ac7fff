"""The two-sample comparison behind l2.reset, l2.vector and l1.sampled_step: its statistics
(envport.verifiers.stats.two_sample) agree with scipy.stats and noise_stats, its support test is
calibrated, and it tells apart the distributions a wrong reset draws."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

from envport.spec import load_spec
from envport.verifiers.stats import noise_stats
from envport.verifiers.stats import sample_compare as sc
from envport.verifiers.stats import two_sample as ts

from helpers import CARTPOLE, user_env

SPEC = load_spec(CARTPOLE)


def test_the_tests_agree_with_scipy_stats() -> None:
    rng = np.random.default_rng(0)
    for n, m, shift in [(5000, 5000, 0.0), (5000, 5000, 0.04), (3000, 200, 0.1)]:
        a, b = rng.random(n), rng.random(m) + shift
        distance, p = ts.ks_test(a, b)
        reference = stats.ks_2samp(a, b)
        assert distance == pytest.approx(reference.statistic)
        assert p == pytest.approx(reference.pvalue, rel=0.1, abs=1e-12)
    table = np.array([[30, 50, 20, 0], [25, 60, 15, 0]])
    statistic, p = ts.chi_square_test(table)
    expected = stats.chi2_contingency(table[:, :3], correction=False)
    assert (statistic, p) == pytest.approx((expected.statistic, expected.pvalue))


def test_sample_sizes_are_noise_stats_designs() -> None:
    for p0 in (np.ones(3) / 3, np.array([0.1, 0.2, 0.7])):
        assert ts.chi_square_samples(p0, 0.05, 0.01, 0.95) == noise_stats.chi_square_samples(
            p0, 0.05, 0.01, 0.95
        )
    assert ts.ks_samples(0.05, 0.01, 0.95) == noise_stats.ks_samples(0.05, 0.01, 0.95)
    # Hundreds of categories (a Taxi state code) are sized in closed form, not by search.
    assert 1000 < ts.chi_square_samples(np.ones(300) / 300, 0.05, 0.001, 0.95) < 5000
    # At equal sizes the stated detectable distance is noise_stats' DKW design.
    n = noise_stats.ks_samples(0.05, 0.001, 0.95)
    assert ts.ks_detectable(n, n, 0.001, 0.95) == pytest.approx(0.05, abs=1e-4)


def test_the_exceedance_test_is_exact_and_about_two_to_the_minus_k() -> None:
    assert ts.exceedance_p(0, 100, 100) == 1.0
    assert ts.exceedance_p(1, 100, 100) == pytest.approx(100 / 200)
    assert ts.exceedance_p(3, 100, 100) == pytest.approx(100 * 99 * 98 / (200 * 199 * 198))
    assert ts.exceedance_p(10, 10_000, 10_000) == pytest.approx(2.0**-10, rel=0.01)
    assert ts.exceedance_critical(15_000, 15_000, 1e-5) == 17
    # Calibration: under the null, P(count >= k) matches the formula.
    rng = np.random.default_rng(1)
    counts = [int((rng.random(50) > rng.random(60).max()).sum()) for _ in range(4000)]
    observed = np.mean(np.asarray(counts) >= 2)
    assert observed == pytest.approx(ts.exceedance_p(2, 50, 60), abs=0.02)


def _verdict(reference: np.ndarray, port: np.ndarray, name: str = "obs.x") -> sc.Verdict:
    return sc.compare(SPEC, name, reference, port, alpha=1e-3, shift=0.05, power=0.95)


def test_wrong_reset_draws_are_told_apart_and_the_right_one_is_not() -> None:
    rng = np.random.default_rng(2)
    n = 15_000
    uniform = rng.uniform(-0.05, 0.05, n)
    assert _verdict(uniform, rng.uniform(-0.05, 0.05, n)).passed
    # The reference's variance, the wrong shape: the tails outside the range give it away.
    normal = _verdict(uniform, rng.normal(0.0, 0.05 / np.sqrt(3), n))
    assert not normal.passed and normal.kind == "continuous"
    assert normal.port["max"] > 0.05 and normal.reference["max"] <= 0.05
    one_sided = _verdict(uniform, rng.uniform(0.0, 0.05, n))
    assert not one_sided.passed and "KS" in one_sided.problem
    # 1% wider at one end: too little for KS at this n, plenty for the support test.
    wider = _verdict(uniform, rng.uniform(-0.05, 0.051, n))
    assert not wider.passed and wider.problem.startswith("support: ")


def test_constants_compare_exactly_and_categories_by_chi_square() -> None:
    zeros = np.zeros(1000, dtype=np.int64)
    assert _verdict(zeros, zeros, "state.elapsed_steps").passed
    off = _verdict(zeros, np.ones(1000, dtype=np.int64), "state.elapsed_steps")
    assert not off.passed and off.kind == "constant" and "1000 of 1000" in off.problem
    rng = np.random.default_rng(3)
    codes = rng.integers(0, 300, 4000) * 2  # even codes only, as reset states
    same = _verdict(codes, rng.integers(0, 300, 4000) * 2, "obs")
    assert same.passed and same.kind == "discrete" and same.test == "chi-square"
    # A port drawing a fifth of its codes where the reference never does.
    odd = np.where(rng.random(4000) < 0.2, codes + 1, codes)
    assert not _verdict(codes, odd, "obs").passed


def _deal(rng: np.random.Generator, n: int, coupled: bool) -> dict[str, np.ndarray]:
    """Four cards from a Blackjack deck; `coupled`: the fourth is the second's draw again."""
    deck = np.array([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10])
    cards = rng.choice(deck, size=(n, 4))
    if coupled:
        cards[:, 3] = cards[:, 1]
    return {f"state.hand[{i}]": cards[:, i] for i in range(4)}


def test_components_drawn_together_are_told_apart_only_jointly() -> None:
    rng = np.random.default_rng(5)
    reference, coupled = _deal(rng, 6000, False), _deal(rng, 6000, True)
    # Alone, every card of the coupled deal is drawn as the reference draws it ...
    alone = sc.compare_all(SPEC, reference, coupled, 1e-3, 0.05, 0.95)
    assert all(v.passed for v in alone)
    # ... together, the whole hand's table (its common hands, the rest pooled) and its hash
    # are not.
    expected, got = sc.with_joint(reference, coupled)
    failed = {v.name for v in sc.compare_all(SPEC, expected, got, 1e-3, 0.05, 0.95) if not v.passed}
    assert failed == {"joint[discrete]", "joint[hash]"}, failed


def test_pairs_are_tabulated_when_the_whole_table_is_too_large() -> None:
    rng = np.random.default_rng(7)
    wide = {f"state.cell[{i}]": rng.integers(0, 6, 3000) for i in range(6)}
    coupled = dict(wide) | {"state.cell[5]": wide["state.cell[2]"]}
    expected, got = sc.with_joint(wide, {k: rng.permutation(v) for k, v in coupled.items()})
    assert "joint[discrete]" not in expected  # 6**6 hands: too many to fill a table
    assert "joint[state.cell[2] ~ state.cell[5]]" in expected
    # Shuffled rows keep each component's distribution and the pair's coupling is lost; the
    # unshuffled coupled sample keeps it: only the pair's table and the hash can tell.
    expected, got = sc.with_joint(wide, {k: v for k, v in coupled.items()})
    failed = {v.name for v in sc.compare_all(SPEC, expected, got, 1e-3, 0.05, 0.95) if not v.passed}
    assert "joint[state.cell[2] ~ state.cell[5]]" in failed, failed


def test_joint_columns_raise_no_false_alarm_on_independent_draws() -> None:
    rng = np.random.default_rng(6)
    alarms = 0
    for _ in range(40):
        expected, got = sc.with_joint(_deal(rng, 3000, False), _deal(rng, 3000, False))
        joint = {k: v for k, v in expected.items() if k.startswith("joint[")}
        assert set(joint) == {"joint[discrete]", "joint[hash]"}
        verdicts = sc.compare_all(SPEC, joint, {k: got[k] for k in joint}, 0.05, 0.05, 0.95)
        alarms += not all(v.passed for v in verdicts)
    assert alarms <= 6  # family alpha 0.05 per round


def test_false_alarms_stay_near_alpha() -> None:
    rng = np.random.default_rng(4)
    alarms = 0
    for _ in range(200):
        verdict = sc.compare(
            SPEC, "obs.x", rng.normal(size=400), rng.normal(size=400), 0.05, 0.05, 0.95
        )
        alarms += not verdict.passed
    assert alarms <= 20  # alpha 0.05 over the KS test and four support tests


def test_columns_name_components_like_the_other_checks() -> None:
    obs = np.zeros((5, 4), dtype=np.float32)
    assert list(sc.columns("obs", obs, SPEC)) == [
        "obs.x",
        "obs.x_dot",
        "obs.theta",
        "obs.theta_dot",
    ]
    states = {"physics": np.zeros((5, 4)), "elapsed_steps": np.zeros(5, dtype=np.int64)}
    names = list(sc.columns("state", states, SPEC))
    assert names == [*(f"state.physics[{i}]" for i in range(4)), "state.elapsed_steps"]
    assert list(sc.columns("obs", np.zeros(5, dtype=np.int64), SPEC)) == ["obs"]


def test_the_kolmogorov_tail_is_scipys() -> None:
    from scipy import special

    for x in [*np.linspace(0.05, 3.0, 120), 1.17, 1.18, 1.19, 6.0]:
        assert ts.kolmogorov(float(x)) == pytest.approx(special.kolmogorov(x), rel=1e-9, abs=1e-15)


def test_a_classic_control_env_is_checked_without_importing_scipy() -> None:
    # scipy takes a second or more to import; CartPole's components are continuous or constant.
    code = (
        "import sys\n"
        "from envport.spec import load_spec\n"
        "from envport.verifiers.stats import reset_sample, sample_compare\n"
        "from envport.targets.reference import Reference\n"
        f"spec = load_spec({str(CARTPOLE)!r})\n"
        "sample = reset_sample.draw(spec, Reference(spec), 0)\n"
        "columns = sample.columns(spec)\n"
        "verdicts = sample_compare.compare_all(spec, columns, columns, 1e-3, 0.05, 0.95)\n"
        "assert all(v.passed for v in verdicts)\n"
        "print(sorted(m for m in sys.modules if m.startswith('scipy')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=user_env()
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
