"""The reference's reset sample kept on disk when it was slow to draw.

l2.reset holds the port's reset to n reference resets (envport.verifiers.stats.reset_sample).
They follow from the spec, the seed and the reference's code alone, and a reference with a
generated world pays for them on every verify: Crafter's 300 worlds are four minutes, in
each repair's re-verify and in each of a mutation self-check's mutants. Like the
`[state.reached]` play, they are the trusted reference's own answers, so the driver keeps
them under envport's cache (`reached/`, which no worker can see or write), keyed as that play
is (draws/reached_cache.py: the spec as loaded, the harness folders, the reference's
packages, the installed distributions) and by the seed and envport's code that draws them.

Only a sample that took KEEP_AFTER seconds or more is kept: a quick one is drawn again, so a
test that patches a reference in its own process never meets a sample kept from before.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from envport.spec import PortSpec
from envport.targets.reference import Reference
from envport.verifiers.coverage import branches
from envport.verifiers.draws import reached_cache
from envport.verifiers.stats import reset_sample
from envport.verifiers.stats.reset_sample import ResetSample

KEEP_AFTER = 20.0
# envport's code that decides which resets are drawn and what is read of each.
_DRAWERS = (
    "envport/verifiers/stats/reset_sample.py",
    "envport/verifiers/reporting/states.py",
    "envport/targets/reference.py",
)


@dataclass(frozen=True)
class KeptSample:
    """The sample as kept: the resets, and the reference's branch arcs drawing them took
    first (None when no measure ran: a verify that measures draws them again)."""

    sample: ResetSample
    arcs: dict[str, list[tuple[int, int]]] | None


def draw(spec: PortSpec, reference: Reference, seed: int) -> ResetSample:
    """The reference's reset sample for this seed: kept from an earlier verify, or drawn."""
    found = reached_cache.key(spec, _DRAWERS, what=f"l2.reset seed {seed}")
    measure = branches.current()
    kept = reached_cache.load(found) if found else None
    if _usable(kept, measure):
        assert isinstance(kept, KeptSample)
        if measure is not None and kept.arcs:
            # What drawing it took, taken again: the coverage of a verify that loads the
            # sample is the coverage of the one that drew it.
            measure.add(measure.context, kept.arcs)
        return kept.sample
    before = measure.executed() if measure is not None else None
    started = time.perf_counter()
    sample = reset_sample.draw(spec, reference, seed)
    if found and time.perf_counter() - started >= KEEP_AFTER:
        arcs = None
        if measure is not None and before is not None:
            arcs = branches.taken_since(before, measure.executed())
        reached_cache.store(found, KeptSample(sample, arcs))
    return sample


def _usable(kept: Any, measure: branches.Measure | None) -> bool:
    if not isinstance(kept, KeptSample) or not isinstance(kept.sample, ResetSample):
        return False
    return measure is None or kept.arcs is not None
