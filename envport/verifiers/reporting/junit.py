"""JUnit XML for CI systems: one test case per level and mode, divergences as failures.

Every text in it is made inert first (`envport.io.inert`): a port's error may hold control
characters, which XML 1.0 forbids even as character references, so a CI system would
refuse the whole file; they are written as visible escapes (\\x1b) instead.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from envport.gaps import GapKind, gap_lines
from envport.io.inert import inert
from envport.verifiers.reporting.divergence import VerifyReport


def junit_xml(report: VerifyReport) -> str:
    suite = ET.Element("testsuite", name=inert(f"envport verify {report.port}"))
    cases = 0
    failures = 0
    load = ET.SubElement(suite, "testcase", classname="envport.port", name="load")
    cases += 1
    if report.error:
        failures += 1
        error = inert(report.error)
        ET.SubElement(load, "failure", message=error).text = error
    for level in report.results:
        case = ET.SubElement(
            suite,
            "testcase",
            classname=f"envport.{level.level}",
            name=level.name,
            time=f"{sum(level.seconds.values()):.3f}",
        )
        cases += 1
        if not level.passed:
            failures += 1
            failure = ET.SubElement(case, "failure", message=inert(level.failure_message()))
            text = "\n\n".join(d.text() for d in level.divergences) or level.summary()
            failure.text = inert(text)
    for name, why in report.not_run.items():
        case = ET.SubElement(suite, "testcase", classname="envport.not_run", name=name)
        ET.SubElement(case, "skipped", message=inert(why))
        cases += 1
    skipped = len(report.not_run)
    # What passing checks did not show (envport.gaps): a skipped case each, a failure under
    # --strict, so a CI page tells a fully checked port from a partly checked one.
    for line in map(inert, gap_lines(g for g in report.gaps if g.kind is not GapKind.NOT_RUN)):
        case = ET.SubElement(suite, "testcase", classname="envport.gaps", name=line)
        cases += 1
        if report.strict:
            failures += 1
            ET.SubElement(case, "failure", message=f"--strict: {line}").text = line
        else:
            skipped += 1
            ET.SubElement(case, "skipped", message=f"gap: {line}")
    if report.coverage is not None:
        # The reference's branch coverage as the suite's properties: CI dashboards chart them.
        properties = ET.Element("properties")
        found = report.coverage
        for name, number in [("total", found.total), ("covered", found.covered)]:
            ET.SubElement(
                properties, "property", name=f"reference_branches.{name}", value=str(number)
            )
        for name, number in found.levels.items():
            ET.SubElement(
                properties, "property", name=f"reference_branches.{name}", value=str(number)
            )
        suite.insert(0, properties)
    suite.set("tests", str(cases))
    suite.set("skipped", str(skipped))
    suite.set("failures", str(failures))
    suite.set("time", f"{report.seconds.get('total', 0.0):.3f}")
    return ET.tostring(suite, encoding="unicode", xml_declaration=True)


def write_junit(report: VerifyReport, path: Path) -> None:
    path.write_text(junit_xml(report), encoding="utf-8")
