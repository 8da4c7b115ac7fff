"""The statistics of the sampler check: sample size for a stated power, and the two tests.

Categorical noise: a chi-square test of homogeneity on the 2 x k table of counts (reference
draws against port samples). Its power for two samples of n each is that of a noncentral
chi-square with k - 1 degrees of freedom and noncentrality

    lambda = (n / 2) * sum_k (p1_k - p0_k)^2 / pbar_k,    pbar = (p0 + p1) / 2,

so n is the smallest sample giving the stated power against the least favourable
alternative the design names: one category's probability moved by `shift` (up or down), the
difference spread over the others in proportion.

Continuous noise: the two-sample Kolmogorov-Smirnov test. Its power has no closed form, so n
comes from a bound that holds for every distribution: by the Dvoretzky-Kiefer-Wolfowitz
inequality each empirical CDF is within eps of its own CDF with probability at least
1 - 2 exp(-2 n eps^2), so with two such events (probability >= power) a true KS distance
`shift` shows as an observed one above the test's critical value once

    sqrt(n) >= (sqrt(2 ln(4 / (1 - power))) + sqrt(-ln(alpha / 2))) / shift.

The power reported for the KS test is that lower bound. Multi-component noise is tested per
component with a Bonferroni-corrected alpha.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from scipy import stats

MAX_SAMPLES = 2_000_000


@dataclass
class TestResult:
    test: str
    statistic: float
    p_value: float
    samples: int  # per side
    power: float  # design power against the stated shift, at the alpha used
    alpha: float


def _alternatives(p0: np.ndarray, shift: float) -> list[np.ndarray]:
    """One category moved by +-shift, the rest rescaled to keep the total at 1."""
    found = []
    for j in range(len(p0)):
        rest = 1.0 - p0[j]
        for sign in (1.0, -1.0):
            moved = p0[j] + sign * shift
            if not 0.0 <= moved <= 1.0 or rest <= 0.0:
                continue
            p1 = p0 * (1.0 - moved) / rest
            p1[j] = moved
            found.append(p1)
    return found


def chi_square_power(p0: np.ndarray, p1: np.ndarray, n: int, alpha: float) -> float:
    """Power of the 2 x k homogeneity test, n draws from each of p0 and p1."""
    pbar = (p0 + p1) / 2.0
    keep = pbar > 0
    noncentrality = n / 2.0 * float(np.sum((p1 - p0)[keep] ** 2 / pbar[keep]))
    df = int(keep.sum()) - 1
    critical = stats.chi2.ppf(1.0 - alpha, df)
    return float(stats.ncx2.sf(critical, df, noncentrality))


def chi_square_samples(p0: np.ndarray, shift: float, alpha: float, power: float) -> int:
    """The smallest n per side with `power` against every one-category shift of p0."""
    alternatives = _alternatives(np.asarray(p0, float), shift)
    if not alternatives:
        raise ValueError(f"no category can move by {shift}")

    def worst(n: int) -> float:
        return min(chi_square_power(p0, p1, n, alpha) for p1 in alternatives)

    low, high = 2, 2
    while worst(high) < power:
        low, high = high, high * 2
        if high > MAX_SAMPLES:
            raise ValueError(f"more than {MAX_SAMPLES} samples needed for shift {shift}")
    while low < high:
        middle = (low + high) // 2
        low, high = (middle + 1, high) if worst(middle) < power else (low, middle)
    return high


def chi_square_design_power(p0: np.ndarray, shift: float, n: int, alpha: float) -> float:
    return min(chi_square_power(p0, p1, n, alpha) for p1 in _alternatives(np.asarray(p0), shift))


def ks_samples(shift: float, alpha: float, power: float) -> int:
    """n per side for which the DKW bound guarantees `power` against KS distance `shift`."""
    root = (math.sqrt(2 * math.log(4 / (1 - power))) + math.sqrt(-math.log(alpha / 2))) / shift
    return math.ceil(root**2)


def ks_power_bound(shift: float, n: int, alpha: float) -> float:
    """The DKW lower bound on the KS test's power at distance `shift` with n per side."""
    # The test's critical distance for two samples of n (asymptotic Kolmogorov tail).
    critical = math.sqrt(-math.log(alpha / 2) / n)
    margin = (shift - critical) / 2
    if margin <= 0:
        return 0.0
    return max(0.0, 1 - 4 * math.exp(-2 * n * margin**2))


def chi_square_test(
    reference: np.ndarray, port: np.ndarray, categories: int, shift: float, alpha: float
) -> TestResult:
    counts = np.stack(
        [
            np.bincount(reference, minlength=categories)[:categories],
            np.bincount(port, minlength=categories)[:categories],
        ]
    )
    # A category neither side ever drew has no expected count: it tells nothing apart.
    table = counts[:, counts.sum(axis=0) > 0]
    if table.shape[1] < 2:
        statistic, p_value = 0.0, 1.0
    else:
        result = stats.chi2_contingency(table, correction=False)
        statistic, p_value = float(result.statistic), float(result.pvalue)
    p0 = (counts[0] + 0.5) / (counts[0].sum() + 0.5 * categories)
    return TestResult(
        test="chi-square",
        statistic=statistic,
        p_value=p_value,
        samples=len(reference),
        power=chi_square_design_power(p0, shift, len(reference), alpha),
        alpha=alpha,
    )


def ks_test(reference: np.ndarray, port: np.ndarray, shift: float, alpha: float) -> TestResult:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        result = stats.ks_2samp(reference, port)
    return TestResult(
        test="Kolmogorov-Smirnov",
        statistic=float(result.statistic),
        p_value=float(result.pvalue),
        samples=len(reference),
        power=ks_power_bound(shift, len(reference), alpha),
        alpha=alpha,
    )
