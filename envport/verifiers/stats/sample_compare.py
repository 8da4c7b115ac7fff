"""Two samples of the same named quantities, compared component by component.

Where port and reference each draw their own randomness (the port's `reset`, a stochastic
env's sampled step) values cannot be matched one to one, so their distributions are. Each
component is classified from the reference's sample:

- constant (every reference draw equal): every port draw must equal it, within the field's
  step tolerance (exactly, for integers);
- discrete (integers, or a float taking few values): chi-square test of homogeneity over the
  reference's values, port draws matching none of them pooled in one extra cell;
- continuous: the two-sample Kolmogorov-Smirnov test;

each with its statistics from envport.verifiers.stats.two_sample. Discrete and continuous
components also get a support test: at each end, the count of one side's draws beyond the
other side's extreme by more than a slack (SUPPORT_SLACK of the reference's range, plus
the field's atol), Rosenbaum's exceedance test. It catches what KS at this n can miss: a
little mass where the reference has none (a Normal where the reference draws a Uniform of
the same spread), or a range stopping short of the reference's.

Family-wise alpha: split evenly over the non-constant components, then half to the
distribution test and half to the four support directions (Bonferroni).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from envport.spec import PortSpec
from envport.verifiers.reporting.compare import obs_columns
from envport.verifiers.stats.joint import joint_columns
from envport.verifiers.stats.two_sample import (
    MAX_SAMPLES,
    chi_square_power,
    chi_square_rate,
    chi_square_samples,
    chi_square_test,
    exceedance_p,
    ks_detectable,
    ks_samples,
    ks_test,
    smoothed,
)

# Support slack, relative to the reference's range: float32 rounding and the gap between a
# sample's extreme and the true one (about range / n for a Uniform) stay well inside it.
SUPPORT_SLACK = 1e-3
# A float component taking at most this many values (each seen ~20 times) is discrete.
DISCRETE_VALUES = 32


@dataclass
class Verdict:
    name: str
    kind: str  # constant, discrete or continuous
    passed: bool
    test: str
    alpha: float
    statistic: float | None = None
    p_value: float | None = None
    design: str = ""  # what the test can detect at this n
    problem: str = ""  # why it failed, one line
    reference: dict[str, float] = field(default_factory=dict)
    port: dict[str, float] = field(default_factory=dict)

    def sentence(self) -> str:
        if self.kind == "constant":
            return f"{self.name}: constant {self.reference.get('min')}, compared exactly"
        text = f"{self.name}: {self.test}"
        if self.p_value is not None:
            text += f" {self.statistic:.4g}, p = {self.p_value:.3g} (alpha {self.alpha:.2g})"
        return text + (f"; {self.design}" if self.design else "")


def summary(values: np.ndarray) -> dict[str, float]:
    """Mean, std, min and max: what a report shows of each side's sample."""
    v = np.asarray(values, dtype=np.float64)
    if v.size == 0:
        return {}
    return {
        name: float(f"{value:.6g}")
        for name, value in (
            ("mean", v.mean()),
            ("std", v.std()),
            ("min", v.min()),
            ("max", v.max()),
        )
    }


def columns(prefix: str, values: np.ndarray | dict[str, np.ndarray], spec: PortSpec) -> dict:
    """Name -> 1-D sample of every component: `obs.x` (the spec's observation names, else
    `obs[i]`; `obs` for a scalar) or `state.physics[2]`."""
    if isinstance(values, dict):
        found: dict[str, np.ndarray] = {}
        for key, array in values.items():
            found |= _components(f"{prefix}.{key}", np.asarray(array))
        return found
    array = np.asarray(values)
    if array.ndim == 1:
        return {prefix: array}
    flat = array.reshape(len(array), -1)
    if prefix == "obs":
        # An agent's padding (agents observing different lengths) is no sample of the env's.
        return {name: flat[:, i] for i, name in obs_columns(spec, flat.shape[1])}
    return {f"{prefix}[{i}]": flat[:, i] for i in range(flat.shape[1])}


def _components(name: str, array: np.ndarray) -> dict[str, np.ndarray]:
    if array.ndim == 1:
        return {name: array}
    return {
        name + f"[{', '.join(map(str, index))}]": array[(slice(None), *index)]
        for index in np.ndindex(array.shape[1:])
    }


def _numeric(values: np.ndarray) -> np.ndarray:
    # Booleans (terminated, truncated) are counted as 0 and 1: numpy cannot subtract them.
    return values.astype(np.int64) if values.dtype.kind == "b" else values


def classify(reference: np.ndarray) -> str:
    # One pass for the common case, no sort: most of an image observation's components
    # never vary within a condition (Seaquest's 1,000 bits, 17 samples of 12,648 each).
    if reference.size and reference.dtype.kind in "biuf" and reference.min() == reference.max():
        return "constant"
    values = np.unique(reference)
    if len(values) == 1:
        return "constant"
    if reference.dtype.kind in "biu":
        return "discrete"
    if len(values) <= DISCRETE_VALUES and len(reference) >= 20 * len(values):
        return "discrete"
    return "continuous"


def tolerance(spec: PortSpec, name: str) -> tuple[float, float]:
    return spec.tolerance_for(name.removeprefix("state.")).bounds(free_running=False)


def _support(
    reference: np.ndarray, port: np.ndarray, slack: float, alpha: float
) -> tuple[str, float]:
    """The first of the four exceedance tests that rejects (one line), and the least p."""
    ref, got = reference.astype(np.float64), port.astype(np.float64)
    n, m = len(ref), len(got)
    checks = (
        ("port draws above the reference's max", int((got > ref.max() + slack).sum()), m, n),
        ("port draws below the reference's min", int((got < ref.min() - slack).sum()), m, n),
        ("reference draws above the port's max", int((ref > got.max() + slack).sum()), n, m),
        ("reference draws below the port's min", int((ref < got.min() - slack).sum()), n, m),
    )
    least = 1.0
    for what, count, mine, theirs in checks:
        p = exceedance_p(count, mine, theirs)
        least = min(least, p)
        if p < alpha / 4:
            return f"support: {count} of {mine} {what} (p = {p:.3g})", p
    return "", least


def _categories(reference: np.ndarray, port: np.ndarray, atol: float, rtol: float) -> tuple:
    """Both samples as indices into the reference's values; a port draw matching none (within
    the tolerance) goes to one extra cell, index k."""
    values = np.unique(reference)
    ref_idx = np.searchsorted(values, reference)
    got = port.astype(values.dtype) if values.dtype.kind in "biu" else port.astype(np.float64)
    nearest = np.clip(np.searchsorted(values, got), 0, len(values) - 1)
    below = np.clip(nearest - 1, 0, len(values) - 1)
    pick = np.where(np.abs(values[below] - got) < np.abs(values[nearest] - got), below, nearest)
    close = np.abs(values[pick].astype(np.float64) - got) <= atol + rtol * np.abs(values[pick])
    return ref_idx, np.where(close, pick, len(values)), len(values)


def compare(
    spec: PortSpec,
    name: str,
    reference: np.ndarray,
    port: np.ndarray,
    alpha: float,
    shift: float,
    power: float,
    exact_constants: bool = True,
    kind: str | None = None,
) -> Verdict:
    """One component: `alpha` is this component's share of the family's. A component the
    reference never varies compares exactly, or (`exact_constants` False: a few hundred
    draws of a conditional outcome, where a rare value may just not have come up) by the
    exceedance count of port draws off the reference's one value. `kind`: the reference's
    `classify`, when the caller has it."""
    reference, port = (_numeric(np.asarray(v).reshape(-1)) for v in (reference, port))
    kind = kind or classify(reference)
    verdict = Verdict(
        name, kind, True, "exact", alpha, reference=summary(reference), port=summary(port)
    )
    if port.dtype.kind not in "biuf":
        verdict.passed, verdict.problem = False, f"port values of dtype {port.dtype}"
        return verdict
    atol, rtol = tolerance(spec, name)
    if kind == "constant":
        want = reference[0].astype(np.float64)
        off = np.abs(port.astype(np.float64) - want) > atol + rtol * abs(want)
        if not exact_constants:
            p = exceedance_p(int(off.sum()), len(port), len(reference))
            verdict.test, verdict.statistic, verdict.p_value = "exceedance", float(off.sum()), p
            off = off if p < alpha else np.zeros_like(off)
        if off.any():
            verdict.passed = False
            first = port[np.flatnonzero(off)[0]].item()
            verdict.problem = (
                f"the reference always draws {reference[0].item()}; {int(off.sum())} of "
                f"{len(port)} port draws differ (first {first})"
            )
        return verdict
    n, m = len(reference), len(port)
    if kind == "discrete":
        ref_idx, port_idx, k = _categories(reference, port, atol, rtol)
        counts = np.stack(
            [np.bincount(ref_idx, minlength=k + 1), np.bincount(port_idx, minlength=k + 1)]
        )
        verdict.statistic, verdict.p_value = chi_square_test(counts)
        verdict.test = "chi-square"
        rate = chi_square_rate(smoothed(counts[0, :k]), shift)
        achieved = (
            chi_square_power(k - 1, rate, min(n, m), alpha / 2) if math.isfinite(rate) else 1.0
        )
        verdict.design = f"n = {n}, {m}; power {achieved:.3f} against a {shift:g} shift"
    else:
        verdict.statistic, verdict.p_value = ks_test(reference, port)
        verdict.test = "KS"
        distance = ks_detectable(n, m, alpha / 2, power)
        verdict.design = f"n = {n}, {m}; power {power:g} against a KS distance of {distance:.3g}"
    if verdict.p_value < alpha / 2:
        verdict.passed = False
        verdict.problem = f"{verdict.test} p = {verdict.p_value:.3g} < {alpha / 2:.2g}"
        return verdict
    ref_range = float(reference.max()) - float(reference.min())
    problem, _ = _support(reference, port, SUPPORT_SLACK * ref_range + atol, alpha / 2)
    if problem:
        verdict.passed, verdict.problem = False, problem
    return verdict


def compare_all(
    spec: PortSpec,
    reference: dict[str, np.ndarray],
    port: dict[str, np.ndarray],
    alpha: float,
    shift: float,
    power: float,
    exact_constants: bool = True,
) -> list[Verdict]:
    """Every component the reference has; `alpha` is the family's."""
    kinds = {name: classify(np.asarray(values).reshape(-1)) for name, values in reference.items()}
    tested = sum(kind != "constant" for kind in kinds.values()) or 1
    verdicts = []
    for name, values in reference.items():
        if name not in port:
            verdicts.append(Verdict(name, kinds[name], False, "present", alpha, problem="missing"))
            continue
        verdicts.append(
            compare(
                spec,
                name,
                values,
                port[name],
                alpha / tested,
                shift,
                power,
                exact_constants,
                kinds[name],
            )
        )
    return verdicts


def with_joint(
    reference: dict[str, np.ndarray], port: dict[str, np.ndarray]
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Both sides with, for each group of two or more continuous components (one state
    field's, the observation's), two projections of the components standardised by the
    reference's mean and std: their sum (`obs.joint[sum]`) and their alternating sum
    (`obs.joint[alternating]`). Independent components give projections of one spread; a
    port drawing its components from one shared draw, or correlated where the reference's
    are not, has the right marginals and a projection twice as wide or collapsed.

    Discrete components get joint columns too (envport.verifiers.stats.joint): the whole tuple, the
    pairs and a hash of the tuple as categories; the state's components where the sample has
    discrete ones, else the observation's (a function of the state: the same information)."""
    groups: dict[str, list[str]] = {}
    for name, values in reference.items():
        if name in port and classify(_numeric(np.asarray(values))) == "continuous":
            group = name.split("[")[0] if name.startswith("state.") else "obs"
            groups.setdefault(group, []).append(name)
    reference, port = dict(reference), dict(port)
    for group, names in groups.items():
        if len(names) < 2:
            continue
        ref = np.stack([np.asarray(reference[n], dtype=np.float64) for n in names])
        got = np.stack([np.asarray(port[n], dtype=np.float64) for n in names])
        mean, std = ref.mean(axis=1, keepdims=True), ref.std(axis=1, keepdims=True)
        ref, got = (ref - mean) / std, (got - mean) / std
        signs = np.where(np.arange(len(names)) % 2 == 0, 1.0, -1.0)[:, None]
        for label, weights in (("sum", 1.0), ("alternating", signs)):
            reference[f"{group}.joint[{label}]"] = (ref * weights).sum(axis=0)
            port[f"{group}.joint[{label}]"] = (got * weights).sum(axis=0)
    discrete = [
        name
        for name, values in reference.items()
        if name in port and "joint[" not in name
        and classify(_numeric(np.asarray(values).reshape(-1))) == "discrete"
    ]  # fmt: skip
    in_state = [name for name in discrete if name.startswith("state.")]
    ref_joint, port_joint = joint_columns(reference, port, in_state or discrete)
    return reference | ref_joint, port | port_joint


def design_samples(
    reference: dict[str, np.ndarray], alpha: float, shift: float, power: float
) -> tuple[int, str]:
    """n per side for the design, from a pilot sample of the reference: KS's DKW bound for
    continuous components, the noncentral chi-square for discrete ones (baseline from the
    pilot), at each component's share of `alpha`; the largest n, and how it was chosen."""
    kinds = {name: classify(np.asarray(v).reshape(-1)) for name, v in reference.items()}
    tested = [name for name, kind in kinds.items() if kind != "constant"]
    if not tested:
        return 0, "every component constant: compared exactly"
    share = alpha / len(tested) / 2
    sizes = {}
    for name in tested:
        values = np.asarray(reference[name]).reshape(-1)
        if kinds[name] == "continuous":
            sizes[name] = ks_samples(shift, share, power)
        else:
            counts = np.unique(values, return_counts=True)[1]
            sizes[name] = chi_square_samples(smoothed(counts), shift, share, power)
    n = min(max(sizes.values()), MAX_SAMPLES)
    return n, (
        f"n = {n} per side: power {power:g} against a KS distance of {shift:g} (DKW bound) or "
        f"a {shift:g} shift of one category (chi-square), alpha {alpha:g} over "
        f"{len(tested)} components"
    )


def verdict_fields(verdict: Verdict) -> dict[str, Any]:
    return {
        "kind": verdict.kind,
        "test": verdict.test,
        "statistic": verdict.statistic,
        "p_value": verdict.p_value,
        "alpha": verdict.alpha,
        "design": verdict.design,
        "reference": verdict.reference,
        "port": verdict.port,
    }
