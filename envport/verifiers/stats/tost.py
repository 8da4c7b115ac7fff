"""Equivalence of paired returns: statsmodels' paired TOST, its interval and its power.

Two one-sided tests (TOST) reject "the mean difference is at most -margin" and "at least
+margin"; both rejected at alpha means the difference lies within +-margin, which a
non-significant t-test never shows. The matching interval is the (1 - 2 alpha) confidence
interval of the mean difference: equivalence at alpha is exactly that interval inside
+-margin. Power is reported two ways, from the observed standard deviation of the
differences: the TOST's probability of concluding equivalence were the true difference 0,
and a two-sided paired t-test's probability of detecting a true difference of the margin.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy import stats
from statsmodels.stats.power import TTestPower
from statsmodels.stats.weightstats import ttost_paired


@dataclass
class TostResult:
    pairs: int
    mean_difference: float
    sd_difference: float
    ci_low: float
    ci_high: float
    ci_level: float
    margin: float
    alpha: float
    p_value: float
    equivalent: bool
    power_equivalence: float  # P(TOST concludes equivalence | true difference 0)
    power_detect_margin: float  # P(paired t-test detects | true difference = margin)

    @property
    def verdict(self) -> str:
        if self.equivalent:
            return "equivalent"
        if self.ci_low > self.margin or self.ci_high < -self.margin:
            return "different"
        return "not shown equivalent"

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "verdict": self.verdict}


def paired_tost(port: np.ndarray, reference: np.ndarray, margin: float, alpha: float) -> TostResult:
    """TOST of mean(port - reference) within +-margin, pairs by index."""
    x = np.asarray(port, dtype=np.float64)
    y = np.asarray(reference, dtype=np.float64)
    d = x - y
    n = len(d)
    mean = float(d.mean())
    sd = float(d.std(ddof=1)) if n > 1 else 0.0
    with warnings.catch_warnings():
        # Identical pairs (a deterministic env, same starts) give sd 0: t is +-inf, which
        # statsmodels turns into the right p-value with a division warning.
        warnings.simplefilter("ignore", RuntimeWarning)
        p_value = float(ttost_paired(x, y, -margin, margin)[0])
    if sd == 0.0:
        # No spread at all: any shift of the margin would show, and zero would pass.
        low = high = mean
        power_equivalence = power_detect = 1.0
    else:
        half = stats.t.ppf(1 - alpha, n - 1) * sd / math.sqrt(n)
        low, high = float(mean - half), float(mean + half)
        effect = margin / sd
        # Both one-sided tests must reject: at a true difference of 0 each does with
        # probability `one_sided`, so both do with at least 2 * one_sided - 1.
        one_sided = _power(effect, n, alpha, "larger")
        power_equivalence = max(0.0, 2 * one_sided - 1)
        power_detect = _power(effect, n, alpha, "two-sided")
    if math.isnan(p_value):
        p_value = 1.0
    return TostResult(
        pairs=n,
        mean_difference=mean,
        sd_difference=sd,
        ci_low=low,
        ci_high=high,
        ci_level=1 - 2 * alpha,
        margin=margin,
        alpha=alpha,
        p_value=p_value,
        equivalent=p_value < alpha,
        power_equivalence=power_equivalence,
        power_detect_margin=power_detect,
    )


def _power(effect: float, n: int, alpha: float, alternative: str) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        power = float(
            TTestPower().power(effect_size=effect, nobs=n, alpha=alpha, alternative=alternative)
        )
    # statsmodels' noncentral t can fail (nan) far out in the tail, where power is 1.
    return 1.0 if math.isnan(power) and effect * math.sqrt(n) > 5 else power
