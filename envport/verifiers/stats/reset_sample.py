"""The reference's reset draws: what the port's `reset` (and its autoreset) is held to.

Drawn once per run, in the verifier's process, before the port has finished loading: the
reset check (l2.reset) tests the port's reset distribution against it, and the vector check
(l2.vector) holds every reset the port makes mid-run to its support, draw by draw.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from envport.spec import PortSpec
from envport.structure import canonical, summarised
from envport.targets import rule_trace
from envport.targets.reference import Reference, valid_helpers
from envport.verifiers.reporting.divergence import FieldDiff
from envport.verifiers.reporting.states import stack_states
from envport.verifiers.stats import sample_compare
from envport.verifiers.stats.two_sample import ks_detectable

# The design: family-wise alpha over every component of the start state and the first
# observation, and the effect the test must see with this power (a KS distance, or
# probability moved into one category). False alarms at 1e-3 per run; n follows.
ALPHA = 1e-3
SHIFT = 0.05
POWER = 0.95
# Reference resets that classify the components and estimate a categorical baseline.
PILOT = 1000
# The pilot's first stage: when every component is constant over this many resets, a value
# that any reset takes with probability SHIFT or more would have shown among them with
# probability 1 - ALPHA, the design's own error rates; the reset is then held constant and
# compared exactly, and these resets are the sample (a game's fixed start position pays
# 135 resets, not 2,000).
CONSTANT_PILOT = math.ceil(math.log(ALPHA) / math.log(1 - SHIFT))
# Reset seeds seed * 100_003 + SEED_OFFSET (+ 10**6 for the pilot): apart from L3's
# (seed * 100_003 + i); each seed starts a stream of resets.
SEED_OFFSET = 5_310_000
# A single draw made mid-run (the vector check) is outside the support when it lies beyond
# the reference's sample range by more than this share of the range: it judges one draw, so
# it only has to tell a reset from, say, the terminal state an autoreset forgot to replace.
DRAW_SLACK = 0.05
# A discrete component is held to the reference's set of values when each value was seen
# this many times on average (so a missing value is not chance); else to its range.
SET_MIN_COUNT = 50


@dataclass
class ResetSample:
    obs: np.ndarray  # (n, ...)
    states: dict[str, np.ndarray]  # field -> (n, ...)
    how: str  # how n was chosen

    @property
    def n(self) -> int:
        return len(self.obs)

    def columns(self, spec: PortSpec, with_state: bool = True) -> dict[str, np.ndarray]:
        found = sample_compare.columns("obs", self.obs, spec)
        if with_state:
            found |= state_columns(spec, self.states)
        return found


def state_columns(spec: PortSpec, states: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """A sample of start states (field -> (n, ...)) as components: each leaf's, and the
    spec's summaries of each state (`summary.trees`)."""
    # Items past a list's length are not state (docs/structured-state.md).
    found = sample_compare.columns("state", canonical(spec.state, states), spec)
    helpers = valid_helpers(spec) if spec.state.summaries else {}
    summaries = summarised(spec.state, states, helpers)
    return found | {f"summary.{name}": values for name, values in summaries.items()}


def _resets(reference: Reference, count: int, seed: int | None) -> tuple[list, list]:
    """`count` resets' observations and states: the first seeded (unless `seed` is None:
    the stream goes on), the others continuing its stream."""
    observations, states = [], []
    for index in range(count):
        observations.append(reference.reset(seed if index == 0 else None))
        states.append(reference.read_state())
    return observations, states


def reference_resets(reference: Reference, count: int, seed: int) -> ResetSample:
    """`count` resets: the first seeded, the others continuing its stream."""
    observations, states = _resets(reference, count, seed)
    return ResetSample(np.array(observations), stack_states(states), how="")


def draw(spec: PortSpec, reference: Reference, seed: int) -> ResetSample:
    """n reference resets, n fixed by the design before any port draw is seen."""
    base = seed * 100_003 + SEED_OFFSET
    declared = spec.levels.l2.reset_samples
    if declared is not None:
        # The spec's n, no pilot: its reference's resets are too slow for the design's. The
        # summaries are tried on the first before the rest are paid for.
        observations, states = _resets(reference, 1, base)
        state_columns(spec, stack_states(states))
        more = _resets(reference, declared - 1, None)
        sample = ResetSample(
            np.array(observations + more[0]), stack_states(states + more[1]), how=""
        )
        sample.how = _declared_how(spec, sample)
        return sample
    observations, states = _resets(reference, CONSTANT_PILOT, base + 10**6)
    first = ResetSample(np.array(observations), stack_states(states), how="")
    seen = first.columns(spec).values()
    if all(sample_compare.classify(np.asarray(v).reshape(-1)) == "constant" for v in seen):
        first.how = (
            f"n = {first.n} per side: every component constant over {first.n} resets (a value "
            f"of probability {SHIFT:g} or more would have shown with probability "
            f"{1 - ALPHA:g}): compared exactly"
        )
        return first
    # The rest of the pilot from the same stream: the pilot drawn at once, as before.
    more = _resets(reference, PILOT - CONSTANT_PILOT, None)
    pilot = ResetSample(np.array(observations + more[0]), stack_states(states + more[1]), how="")
    columns, _ = sample_compare.with_joint(pilot.columns(spec), pilot.columns(spec))
    n, how = sample_compare.design_samples(columns, ALPHA, SHIFT, POWER)
    # The pilot's thousand resets ran traced and showed reset's branches; the sample (16k
    # for CartPole, 8k for DoorKey) runs untraced, at a sixth of the cost a reset.
    with rule_trace.untraced():
        sample = reference_resets(reference, max(n, PILOT), base)
    sample.how = how
    return sample


def _declared_how(spec: PortSpec, sample: ResetSample) -> str:
    """How a declared n was chosen, and what it can see: the KS distance the DKW bound
    detects with the design's power at each tested component's share of alpha."""
    tested = [
        name
        for name, values in sample.columns(spec).items()
        if sample_compare.classify(np.asarray(values).reshape(-1)) != "constant"
    ]
    if not tested:
        return f"n = {sample.n} per side ([levels.l2] reset_samples): every component constant"
    # As each component's verdict states its design: its share of alpha, half to the test.
    detects = ks_detectable(sample.n, sample.n, ALPHA / len(tested) / 2, POWER)
    return (
        f"n = {sample.n} per side, the spec's ([levels.l2] reset_samples, not the design's): "
        f"power {POWER:g} against a KS distance of {min(detects, 1.0):.2g} (DKW bound), alpha "
        f"{ALPHA:g} over {len(tested)} components"
    )


class DrawSupport:
    """Per component, what one reset draw may be: the constant, one of the reference's
    values, or within its range (widened by DRAW_SLACK)."""

    def __init__(self, spec: PortSpec, sample: ResetSample) -> None:
        self.spec = spec
        self.rules: dict[str, tuple[str, np.ndarray]] = {}
        # From the spec's few hundred resets, thousands of components' values and ranges are
        # no support: a reference reset itself would fall outside some. Not judged then.
        self.judged = spec.levels.l2.reset_samples is None
        if not self.judged:
            return
        for name, values in sample.columns(spec).items():
            values = values.astype(np.float64)
            kind = sample_compare.classify(values)
            unique = np.unique(values)
            if kind == "constant":
                self.rules[name] = ("constant", unique)
            elif kind == "discrete" and len(values) >= SET_MIN_COUNT * len(unique):
                self.rules[name] = ("one of", unique)
            else:
                slack = DRAW_SLACK * (unique[-1] - unique[0])
                self.rules[name] = ("within", np.array([unique[0] - slack, unique[-1] + slack]))

    def outside(
        self,
        obs: np.ndarray,
        state: dict[str, np.ndarray] | None,
        own: dict[str, np.ndarray] | None = None,
    ) -> list[FieldDiff]:
        """The components of one env's reset (its observation, and its state when readable)
        that no reference reset would give. `own`: the reference's state after its own reset
        of the same env in the same scenario. Where that lies outside what fresh resets
        give, the reference's reset kept what earlier steps left (MinAtar's sticky
        `last_action`), and the port's must keep the same value."""
        draws = sample_compare.columns("obs", np.asarray(obs)[None], self.spec)
        kept: dict[str, np.ndarray] = {}
        if state is not None:
            rows = canonical(self.spec.state, {k: np.asarray(v)[None] for k, v in state.items()})
            draws |= sample_compare.columns("state", rows, self.spec)
            if own is not None:
                theirs = {k: np.asarray(v)[None] for k, v in own.items()}
                kept = sample_compare.columns(
                    "state", canonical(self.spec.state, theirs), self.spec
                )
        diffs = []
        for name, value in draws.items():
            if name not in self.rules:
                continue
            got = float(np.asarray(value, dtype=np.float64)[0])
            atol, rtol = sample_compare.tolerance(self.spec, name)
            expected = self._unlike(name, got, atol, rtol)
            if name in kept:
                held = float(np.asarray(kept[name], dtype=np.float64)[0])
                if self._unlike(name, held, atol, rtol) is not None:
                    close = abs(got - held) <= atol + rtol * abs(held)
                    expected = None if close else f"{held:g} (kept by the reference's reset)"
            if expected is not None:
                diffs.append(FieldDiff(field=name, expected=expected, actual=got))
        return diffs

    def _unlike(self, name: str, got: float, atol: float, rtol: float) -> str | None:
        """What a reset of component `name` may be, when `got` is not that; else None."""
        rule, values = self.rules[name]
        if rule == "within":
            if values[0] - atol <= got <= values[1] + atol:
                return None
            return f"within [{values[0]:.6g}, {values[1]:.6g}]"
        if np.any(np.abs(values - got) <= atol + rtol * np.abs(values)):
            return None
        shown = ", ".join(f"{v:g}" for v in values[:8]) + (", ..." if len(values) > 8 else "")
        return f"{values[0]:g}" if rule == "constant" else f"one of {{{shown}}}"
