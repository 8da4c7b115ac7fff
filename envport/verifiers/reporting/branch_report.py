"""The reference's branch coverage as a report holds it: the figures, the branches missed.

coverage/branches.py measures and analyses; this is only what its analysis hands to the
verify report (divergence.py), the HTML page and the gaps, kept below the measuring so
the report's types import nothing that traces.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from envport.gaps import Gap, GapKind

# Missed condition combinations the report's text lists one by one.
SHOWN = 12


class Branch(BaseModel):
    """One branch line with an exit no check took (or a line never run at all)."""

    file: str  # shown name: the path below its sys.path entry
    line: int
    source: str
    never: str  # "never true", "never false", "never run", or coverage.py's own words
    out_of_scope: str | None = None  # the reason, when the spec or the default excludes it

    def text(self) -> str:
        return f"{self.file}:{self.line} `{self.source}` {self.never}"


class SourceLine(BaseModel):
    """A line of a reference function for the HTML report: run, a branch missed, not run."""

    number: int
    text: str
    mark: str  # "run" | "partial" | "missed" | ""


class ConditionCoverage(BaseModel):
    """The run's condition coverage of the reference's decisions (coverage/conditions.py):
    conditions seen deciding alone, and chains' pairs of tests seen true together."""

    decisions: int = 0  # decisions of more than one condition the measured steps met
    total: int = 0
    covered: int = 0
    missed: list[str] = Field(default_factory=list)
    steps: int = 0  # reference steps measured
    seconds: float = 0.0
    broken: str | None = None  # why nothing could be measured

    def summary(self) -> str:
        if self.broken is not None:
            return f"not measured: {self.broken}"
        percent = 100.0 * self.covered / self.total if self.total else 100.0
        return (
            f"{self.covered} of {self.total} conditions and condition pairs of {self.decisions} "
            f"decisions shown ({percent:.0f}%; masking MC/DC, and if/elif tests together) on "
            f"{self.steps} reference steps measured in {self.seconds:.1f} s"
        )

    def lines(self) -> list[str]:
        """The report's lines: the figure, then each combination never reached (the first
        SHOWN of them, and how many more)."""
        found = [f"conditions: {self.summary()}"]
        found += [f"  never: {missed}" for missed in self.missed[:SHOWN]]
        if len(self.missed) > SHOWN:
            found.append(f"  never: ... and {len(self.missed) - SHOWN} more (the JSON report)")
        return found


class BranchCoverage(BaseModel):
    """The run's branch coverage of the reference, as every report shows it."""

    files: list[str] = Field(default_factory=list)
    total: int = 0  # branch exits in the functions the run entered, out of scope excluded
    covered: int = 0
    levels: dict[str, int] = Field(default_factory=dict)  # exits each level took
    missed: list[Branch] = Field(default_factory=list)
    excluded: list[Branch] = Field(default_factory=list)
    # What ran without being measured (L3's episodes on Ray), so the figure undercounts.
    not_measured: list[str] = Field(default_factory=list)
    # Spec entries of `out_of_scope` that match no branch line (renamed or removed code).
    stale: list[str] = Field(default_factory=list)
    sources: dict[str, list[SourceLine]] = Field(default_factory=dict)
    conditions: ConditionCoverage | None = None

    @property
    def percent(self) -> float:
        return 100.0 * self.covered / self.total if self.total else 100.0

    def summary(self) -> str:
        by_level = ", ".join(f"{name} {count}" for name, count in self.levels.items())
        line = (
            f"{self.covered} of {self.total} branch exits of the reference's functions the run "
            f"entered ({self.percent:.0f}%)"
        )
        if by_level:
            line += f"; by level: {by_level}"
        if self.excluded:
            line += f"; {len(self.excluded)} out of scope"
        if self.not_measured:
            line += f"; not measured: {', '.join(self.not_measured)}"
        return line

    def gaps(self) -> list[Gap]:
        return [
            Gap(check="coverage", kind=GapKind.BRANCH_NOT_EXERCISED, detail=branch.text())
            for branch in self.missed
        ]
