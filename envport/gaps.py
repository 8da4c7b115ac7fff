"""What a verify run did not show: the gaps between "every check that ran passed" and
"every default check ran".

A check that runs weaker than its full form (no state reads, observations only), an ending
the reference can produce that no episode reached, a default check that could not apply:
each is one `Gap`, added by the check that saw it. The verdict is "verified" only when no
check added one; otherwise "verified with gaps" and the list, and `--strict` makes a gap a
failure. Kept below every layer that reports (verifiers, runs, the review and the HTML
report) so all of them read one type.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from enum import StrEnum

from pydantic import BaseModel, ConfigDict


class GapKind(StrEnum):
    """What kind of thing was not shown. New checks add kinds here (coverage: "branch X
    never exercised"); readers show any kind by its value, so a new one needs no reader."""

    NO_STATE_READS = "no state reads"
    OBSERVATIONS_ONLY = "observations only"
    ENDING_NOT_REACHED = "ending never reached"
    NOT_RUN = "not run"
    BRANCH_NOT_EXERCISED = "branch never exercised"
    STATES_NOT_HELD = "drawn states not held"


class Gap(BaseModel):
    """One thing a check did not show: the check (a level name such as `l2.interaction`),
    the kind, and one sentence saying what and why (with the fix, where there is one)."""

    model_config = ConfigDict(frozen=True)

    check: str
    kind: GapKind
    detail: str

    def line(self) -> str:
        return f"{self.check}: {self.kind.value}; {self.detail}"


def gap_lines(gaps: Iterable[Gap]) -> list[str]:
    """Each gap once, in the order first seen (two levels may report the same one)."""
    return list(dict.fromkeys(gap.line() for gap in gaps))


def verdict_word(diverged: bool, gaps: Iterable[Gap], strict: bool = False) -> str:
    """`verified`, `verified with gaps`, or what failed: a divergence, or gaps under --strict."""
    if diverged:
        return "DIVERGED"
    if any(True for _ in gaps):
        return "NOT VERIFIED (--strict: gaps)" if strict else "verified with gaps"
    return "verified"


STRICT_HELP = (
    "fail when a check passed without showing everything it can (no state reads, an "
    "ending never reached, a check that could not apply); without it the verdict is "
    "'verified with gaps' and lists them"
)


def add_strict_option(parser: argparse.ArgumentParser) -> None:
    """`--strict`, the same on `envport verify` and `envport translate`."""
    parser.add_argument("--strict", action="store_true", help=STRICT_HELP)
