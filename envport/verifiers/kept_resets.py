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

from envport.spec import PortSpec
from envport.targets.reference import Reference
from envport.verifiers.draws.kept import kept_or_drawn
from envport.verifiers.stats import reset_sample
from envport.verifiers.stats.reset_sample import ResetSample

KEEP_AFTER = 20.0
# envport's code that decides which resets are drawn and what is read of each.
_DRAWERS = (
    "envport/verifiers/stats/reset_sample.py",
    "envport/verifiers/reporting/states.py",
    "envport/targets/reference.py",
)


def draw(spec: PortSpec, reference: Reference, seed: int) -> ResetSample:
    """The reference's reset sample for this seed: kept from an earlier verify, or drawn."""
    return kept_or_drawn(
        spec,
        _DRAWERS,
        f"l2.reset seed {seed}",
        lambda: reset_sample.draw(spec, reference, seed),
        lambda kept: isinstance(kept, ResetSample),
        KEEP_AFTER,
    )
