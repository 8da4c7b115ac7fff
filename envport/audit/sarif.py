"""SARIF 2.1.0 rendering: one run, one rule per check, one result per finding.

Severity maps to SARIF `level` as critical/high -> error, medium -> warning,
low -> note; the envport severity itself is kept in each result's properties.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

from envport import __version__
from envport.audit.catalog import RULES, Rule
from envport.audit.model import AuditReport, Finding, Severity

SARIF_SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"
TOOL_NAME = "envport-audit"

LEVELS = {
    Severity.CRITICAL: "error",
    Severity.HIGH: "error",
    Severity.MEDIUM: "warning",
    Severity.LOW: "note",
}


def render_sarif(report: AuditReport) -> str:
    return json.dumps(sarif_log(report), indent=2) + "\n"


def sarif_log(report: AuditReport) -> dict[str, Any]:
    rule_index = {rule.id: position for position, rule in enumerate(RULES)}
    run = {
        "tool": {
            "driver": {
                "name": TOOL_NAME,
                "version": __version__,
                "rules": [_rule(rule) for rule in RULES],
            }
        },
        "columnKind": "unicodeCodePoints",
        "results": [_result(finding, rule_index[finding.rule]) for finding in report.findings],
    }
    return {"$schema": SARIF_SCHEMA_URI, "version": SARIF_VERSION, "runs": [run]}


def _rule(rule: Rule) -> dict[str, Any]:
    return {
        "id": rule.id,
        "name": "".join(word.capitalize() for word in rule.id.split("-")),
        "shortDescription": {"text": f"Blocking call: {rule.summary}"},
        "help": {"text": f"Fix: {rule.fix}"},
        "defaultConfiguration": {"level": LEVELS[rule.severity]},
        "properties": {"severity": rule.severity.value, "tags": ["async", "event-loop"]},
    }


def _result(finding: Finding, rule_index: int) -> dict[str, Any]:
    uri = artifact_uri(finding.path)
    result: dict[str, Any] = {
        "ruleId": finding.rule,
        "ruleIndex": rule_index,
        "level": LEVELS[finding.severity],
        "message": {"text": f"{finding.message}. Fix: {finding.fix}"},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": uri},
                    "region": {
                        "startLine": finding.line,
                        "startColumn": finding.col,
                        "endLine": finding.end_line,
                        "endColumn": finding.end_col,
                    },
                }
            }
        ],
        "properties": {
            "severity": finding.severity.value,
            "call": finding.call,
            "chain": [step.function for step in finding.chain],
        },
    }
    if len(finding.chain) > 1:
        # Each call site on the way from the async entry point, so a viewer can walk it.
        result["relatedLocations"] = [
            {
                "id": position,
                "message": {"text": f"{step.function} is reached here"},
                "physicalLocation": {
                    "artifactLocation": {"uri": uri},
                    "region": {"startLine": step.line},
                },
            }
            for position, step in enumerate(finding.chain[1:], start=1)
        ]
    return result


def artifact_uri(path: str) -> str:
    """A URI reference for `path`: relative paths stay relative (SARIF viewers resolve
    them against the checkout), absolute ones become file:// URIs."""
    file = Path(path)
    if file.is_absolute():
        return file.as_uri()
    return quote(file.as_posix())
