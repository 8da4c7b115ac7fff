"""`envport audit --format sarif` validates against the official SARIF 2.1.0 schema."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from envport.audit import audit_paths
from envport.audit.catalog import RULES
from envport.audit.sarif import LEVELS, artifact_uri, sarif_log

SCHEMA = Path(__file__).parent / "schemas" / "sarif-schema-2.1.0.json"
CORPUS = Path(__file__).parent / "audit_corpus"


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft4Validator:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker())


def _errors(validator: jsonschema.Draft4Validator, log: dict) -> list[str]:
    return [
        f"{'/'.join(map(str, error.absolute_path))}: {error.message}"
        for error in validator.iter_errors(log)
    ]


def test_corpus_report_is_valid_sarif(validator: jsonschema.Draft4Validator) -> None:
    report = audit_paths([CORPUS])
    # Round-trip through text: what is validated is what a user's file would hold.
    log = json.loads(json.dumps(sarif_log(report)))
    assert _errors(validator, log) == []
    run = log["runs"][0]
    results = run["results"]
    assert len(results) == len(report.findings) > 0
    rules = run["tool"]["driver"]["rules"]
    assert [rule["id"] for rule in rules] == [rule.id for rule in RULES]
    for result, finding in zip(results, report.findings, strict=True):
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"] == finding.rule
        assert result["level"] == LEVELS[finding.severity]
        region = result["locations"][0]["physicalLocation"]["region"]
        assert (region["startLine"], region["startColumn"]) == (finding.line, finding.col)


def test_chains_become_related_locations(validator: jsonschema.Draft4Validator) -> None:
    report = audit_paths([CORPUS / "tp_helper_chain.py"])
    (result,) = sarif_log(report)["runs"][0]["results"]
    related = result["relatedLocations"]
    assert [entry["physicalLocation"]["region"]["startLine"] for entry in related] == [14, 11]
    assert result["properties"]["chain"] == ["Env.step", "Env._render", "_encode"]


def test_levels_cover_every_severity() -> None:
    assert LEVELS == {"critical": "error", "high": "error", "medium": "warning", "low": "note"}


def test_validator_rejects_a_broken_log(validator: jsonschema.Draft4Validator) -> None:
    # Guards against a schema or validator that accepts anything.
    log = sarif_log(audit_paths([CORPUS / "tp_time_sleep.py"]))
    log["runs"][0]["results"][0]["level"] = "fatal"
    del log["runs"][0]["tool"]["driver"]["name"]
    errors = _errors(validator, log)
    assert len(errors) == 2, errors


def test_absolute_and_spaced_paths_are_uri_references(
    tmp_path: Path, validator: jsonschema.Draft4Validator
) -> None:
    source = tmp_path / "my env.py"
    source.write_text("import time\n\nasync def f():\n    time.sleep(1)\n", encoding="utf-8")
    log = sarif_log(audit_paths([source]))
    assert _errors(validator, log) == []
    location = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == source.as_uri()
    assert artifact_uri(str(source)).startswith("file:///")
    assert " " not in artifact_uri(str(source))
    assert artifact_uri("envs/my env.py") == "envs/my%20env.py"
