"""The two-sample statistics of envport's distribution checks, without scipy.stats.

scipy.stats takes seconds to import and every `envport verify` would pay it, so these are
computed directly: the two-sample KS test (asymptotic Kolmogorov distribution with
Stephens' small-sample correction, in closed form), Pearson's chi-square test of
homogeneity and its power (scipy.special, imported when a discrete component needs it),
the sample sizes of envport.verifiers.stats.noise_stats' designs, and Rosenbaum's exceedance
count. A classic-control env (continuous components only) needs no scipy at all.

Exceedance: under the null hypothesis the pooled draws of both sides are exchangeable, so
k or more of m draws lie beyond the largest of n others with probability

    prod_{i < k} (m - i) / (n + m - i)      (about 2^-k for m = n, for any distribution).
"""

from __future__ import annotations

import math

import numpy as np

# Sample sizes are searched up to this many per side.
MAX_SAMPLES = 100_000


def exceedance_p(count: int, mine: int, theirs: int) -> float:
    """P(at least `count` of `mine` draws beyond the extreme of `theirs` draws), exchangeable."""
    if count <= 0:
        return 1.0
    i = np.arange(count, dtype=np.float64)
    return float(np.exp(np.sum(np.log(mine - i) - np.log(mine + theirs - i))))


def exceedance_critical(mine: int, theirs: int, alpha: float) -> int:
    """The smallest count the support test rejects at `alpha`."""
    count = 1
    while exceedance_p(count, mine, theirs) >= alpha and count < mine:
        count += 1
    return count


def chi_square_rate(p0: np.ndarray, shift: float) -> float:
    """Noncentrality per draw (n per side) of the least favourable one-category shift of p0,
    in closed form: moving category j by s and rescaling the rest (noise_stats' alternatives)
    gives sum (p1 - p0)^2 / pbar = s^2 / (p0_j + s/2) + r c^2 / (1 + c/2), r = 1 - p0_j,
    c = -s / r. Vectorised over j: a reset's state code can have hundreds of categories."""
    rates = []
    for s in (shift, -shift):
        rest = 1.0 - p0
        ok = (p0 + s >= 0) & (p0 + s <= 1) & (rest > 0)
        c = -s / np.where(rest > 0, rest, 1.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            total = s**2 / (p0 + s / 2) + rest * c**2 / (1 + c / 2)
        rates.append(np.where(ok, 0.5 * total, np.inf))
    return float(np.min(rates))


def chi_square_power(df: int, rate: float, n: int, alpha: float) -> float:
    """Power of the homogeneity test with n per side at noncentrality n * rate."""
    from scipy import special

    critical = special.chdtri(df, alpha)
    return float(1.0 - special.chndtr(critical, df, n * rate))


def chi_square_samples(p0: np.ndarray, shift: float, alpha: float, power: float) -> int:
    """The smallest n per side with `power` against every one-category shift of p0 (as
    noise_stats.chi_square_samples, which tries each alternative in turn)."""
    rate, df = chi_square_rate(p0, shift), len(p0) - 1
    if df < 1 or not math.isfinite(rate):
        return 0
    low, high = 2, 2
    while chi_square_power(df, rate, high, alpha) < power and high < MAX_SAMPLES:
        low, high = high, high * 2
    while low < high:
        middle = (low + high) // 2
        enough = chi_square_power(df, rate, middle, alpha) >= power
        low, high = (low, middle) if enough else (middle + 1, high)
    return high


def chi_square_test(table: np.ndarray) -> tuple[float, float]:
    """Pearson's statistic and p-value for homogeneity of the rows of a table of counts."""
    table = table[:, table.sum(axis=0) > 0].astype(np.float64)
    if table.shape[1] < 2:
        return 0.0, 1.0
    expected = table.sum(axis=1, keepdims=True) * table.sum(axis=0) / table.sum()
    statistic = float(((table - expected) ** 2 / expected).sum())
    df = (table.shape[0] - 1) * (table.shape[1] - 1)
    from scipy import special

    return statistic, float(special.chdtrc(df, statistic))


def ks_test(reference: np.ndarray, port: np.ndarray) -> tuple[float, float]:
    """The two-sample KS distance and its asymptotic p-value."""
    a, b = np.sort(reference.astype(np.float64)), np.sort(port.astype(np.float64))
    points = np.concatenate([a, b])
    distance = float(
        np.max(
            np.abs(
                np.searchsorted(a, points, "right") / len(a)
                - np.searchsorted(b, points, "right") / len(b)
            )
        )
    )
    root = math.sqrt(len(a) * len(b) / (len(a) + len(b)))
    return distance, kolmogorov((root + 0.12 + 0.11 / root) * distance)


def kolmogorov(x: float) -> float:
    """P(K > x) for the Kolmogorov distribution: the alternating series for large x, the
    Jacobi theta form for small x (each converges in a few terms where it is used)."""
    if x <= 0:
        return 1.0
    if x < 1.18:
        terms = sum(math.exp(-((2 * j - 1) ** 2) * math.pi**2 / (8 * x * x)) for j in range(1, 8))
        return float(min(1.0, max(0.0, 1.0 - math.sqrt(2 * math.pi) / x * terms)))
    terms = sum((-1) ** (j - 1) * math.exp(-2 * j * j * x * x) for j in range(1, 8))
    return float(min(1.0, max(0.0, 2.0 * terms)))


def ks_samples(shift: float, alpha: float, power: float) -> int:
    """n per side for which the DKW bound guarantees `power` against KS distance `shift`
    (noise_stats.ks_samples)."""
    root = (math.sqrt(2 * math.log(4 / (1 - power))) + math.sqrt(-math.log(alpha / 2))) / shift
    return math.ceil(root**2)


def smoothed(counts: np.ndarray) -> np.ndarray:
    return (counts + 0.5) / (counts.sum() + 0.5 * len(counts))


def ks_detectable(n: int, m: int, alpha: float, power: float) -> float:
    """The KS distance detected with probability >= power at these sizes (the DKW bound of
    noise_stats, for unequal sizes: each empirical CDF within its eps, half the miss each)."""
    critical = math.sqrt(-math.log(alpha / 2) * (n + m) / (2 * n * m))
    eps = [math.sqrt(math.log(4 / (1 - power)) / (2 * size)) for size in (n, m)]
    return critical + sum(eps)
