"""What an audit reports: findings with a severity, and the report over a set of files."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict


class Severity(StrEnum):
    """How badly a call stalls the event loop, worst first."""

    CRITICAL = "critical"
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"

    @property
    def rank(self) -> int:
        """Larger is worse, so `--fail-on` can compare with `>=`."""
        return _RANKS[self]

    def at_least(self, threshold: Severity) -> bool:
        return self.rank >= threshold.rank


_RANKS = {Severity.CRITICAL: 4, Severity.HIGH: 3, Severity.MEDIUM: 2, Severity.LOW: 1}


class ChainStep(BaseModel):
    """One function on the way from an async entry point to a blocking call.

    `line` is where this function is called from the previous step; for the async entry
    point itself it is the line of its `async def`.
    """

    model_config = ConfigDict(frozen=True)

    function: str
    line: int


class Finding(BaseModel):
    """One blocking call reached from async code.

    Columns are 1-based and count characters, as editors and SARIF's default
    `columnKind` (unicodeCodePoints) do.
    """

    model_config = ConfigDict(frozen=True)

    path: str
    line: int
    col: int
    end_line: int
    end_col: int
    rule: str
    severity: Severity
    call: str
    message: str
    fix: str
    chain: list[ChainStep]

    @property
    def entry_point(self) -> str:
        return self.chain[0].function


class AuditReport(BaseModel):
    """Findings over the files one `envport audit` looked at."""

    files: list[str]
    findings: list[Finding]

    def count_by_severity(self) -> dict[str, int]:
        counts = {severity.value: 0 for severity in Severity}
        for finding in self.findings:
            counts[finding.severity.value] += 1
        return counts

    def fails(self, threshold: Severity) -> bool:
        """Whether any finding is at or above `threshold`: the exit code of the audit."""
        return any(finding.severity.at_least(threshold) for finding in self.findings)
