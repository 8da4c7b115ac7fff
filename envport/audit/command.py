"""`envport audit PATH... [--format text|json|sarif] [--fail-on SEVERITY] [--output FILE]`.

Exit codes: 0 when no finding reaches `--fail-on`, 1 when one does, 2 for usage errors
(a missing path, a file that does not parse), reported as one line on stderr.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.text import Text

from envport.audit.model import AuditReport, Severity
from envport.audit.render import finding_line, render_json, render_text, summary_line
from envport.audit.sarif import render_sarif
from envport.audit.sources import audit_paths
from envport.errors import EXIT_DIVERGED, EXIT_OK, EnvportError
from envport.io.inert import InertConsole, say

FORMATS = ("text", "json", "sarif")
# Any finding fails by default, as with a linter; CI relaxes it with `--fail-on high`.
DEFAULT_FAIL_ON = Severity.LOW
_STYLES = {
    Severity.CRITICAL: "bold red",
    Severity.HIGH: "red",
    Severity.MEDIUM: "yellow",
    Severity.LOW: "cyan",
}


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register `envport audit` on the CLI's subparsers."""
    parser = subparsers.add_parser(
        "audit",
        help="find calls that block the event loop in async code",
        description=(
            "Statically audit async functions (and the same-module sync helpers they "
            "call) for calls that block the event loop. Silence one line with a "
            "`# envport: allow-blocking` comment."
        ),
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="files or directories")
    parser.add_argument("--format", choices=FORMATS, default="text", help="output format")
    parser.add_argument(
        "--fail-on",
        choices=[severity.value for severity in Severity],
        default=DEFAULT_FAIL_ON.value,
        help="exit 1 when a finding of this severity or worse exists (default: %(default)s)",
    )
    parser.add_argument("--output", "-o", metavar="FILE", help="write the report to FILE")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the audit; returns the exit code. Usage errors print one line to stderr."""
    fail_on = Severity(args.fail_on)
    try:
        report = audit_paths(args.paths)
        _emit(report, args.format, fail_on, args.output)
    except EnvportError as error:
        say(f"envport audit: {error}")
        return error.exit_code
    return EXIT_DIVERGED if report.fails(fail_on) else EXIT_OK


def _emit(report: AuditReport, output_format: str, fail_on: Severity, output: str | None) -> None:
    if output_format == "text" and output is None:
        _print_text(report)
        return
    if output_format == "json":
        document = render_json(report, fail_on)
    elif output_format == "sarif":
        document = render_sarif(report)
    else:
        document = render_text(report)
    if output is None:
        sys.stdout.write(document)
        return
    try:
        Path(output).write_text(document, encoding="utf-8")
    except OSError as error:
        raise EnvportError(f"{output}: cannot write report: {error.strerror}") from None
    say(summary_line(report))


def _print_text(report: AuditReport) -> None:
    # rich colours the severity on a terminal and prints plain text into a pipe.
    console = InertConsole(file=sys.stdout, highlight=False, soft_wrap=True)
    for finding in report.findings:
        console.print(Text(finding_line(finding), style=_STYLES[finding.severity]))
    console.print(Text(summary_line(report)))
