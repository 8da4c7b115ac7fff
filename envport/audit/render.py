"""Text and JSON renderings of an audit report."""

from __future__ import annotations

import json

from envport.audit.model import AuditReport, Finding, Severity


def finding_line(finding: Finding) -> str:
    """`path:line:col: severity call [rule] — fix (via chain)`: one line per finding."""
    line = (
        f"{finding.path}:{finding.line}:{finding.col}: {finding.severity.value} "
        f"{finding.call} [{finding.rule}] — {finding.fix}"
    )
    if len(finding.chain) > 1:
        line += f" (reached from async code via {describe_chain(finding)})"
    return line


def describe_chain(finding: Finding) -> str:
    entry, *helpers = finding.chain
    steps = [entry.function, *(f"{step.function} (line {step.line})" for step in helpers)]
    return " -> ".join(steps)


def summary_line(report: AuditReport) -> str:
    files = len(report.files)
    noun = "file" if files == 1 else "files"
    if not report.findings:
        return f"envport audit: no blocking calls found in {files} {noun}"
    counts = ", ".join(
        f"{count} {severity}" for severity, count in report.count_by_severity().items() if count
    )
    affected = len({finding.path for finding in report.findings})
    total = len(report.findings)
    plural = "finding" if total == 1 else "findings"
    return f"envport audit: {total} {plural} ({counts}) in {affected} of {files} {noun}"


def render_text(report: AuditReport) -> str:
    lines = [finding_line(finding) for finding in report.findings]
    lines.append(summary_line(report))
    return "\n".join(lines) + "\n"


def render_json(report: AuditReport, fail_on: Severity) -> str:
    document = {
        "findings": [finding.model_dump(mode="json") for finding in report.findings],
        "summary": {
            "files_scanned": len(report.files),
            "findings": len(report.findings),
            "by_severity": report.count_by_severity(),
            "fail_on": fail_on.value,
            "failed": report.fails(fail_on),
        },
    }
    return json.dumps(document, indent=2) + "\n"
