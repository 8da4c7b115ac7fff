"""`envport report RUN [--out FILE] [--bench FILE]`: write the run's HTML report; `envport
report VERIFY.json`: the same page for one verify, from what `verify --json` wrote."""

from __future__ import annotations

import argparse
from pathlib import Path

from envport.errors import EXIT_OK, EnvportError


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "report",
        help="write a run's report as one self-contained HTML page (timeline, diffs, plots), "
        "or a verify's from its --json file",
    )
    parser.add_argument(
        "run",
        help="the run directory, runs/<run-id>; or the file `envport verify --json` wrote",
    )
    parser.add_argument(
        "--out",
        type=Path,
        help="where to write it (default RUN/reports/report.html; for VERIFY.json, "
        "VERIFY.html beside it)",
    )
    parser.add_argument(
        "--bench",
        type=Path,
        action="append",
        default=[],
        help="an `envport bench --json` result to include (RUN/reports/bench*.json are "
        "included anyway); may be repeated",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from envport.report import write_report

    for path in args.bench:
        if not path.is_file():
            raise EnvportError(f"--bench {path}: no such file; pass an `envport bench --json` file")
    given = Path(args.run)
    if given.is_file():
        # A verify's report: the same page a run has for its check, for the verify alone.
        from envport.report.verify_page import read_verify_report, write_verify_page

        if args.bench:
            raise EnvportError("--bench goes with a run directory, not a verify's report")
        out = args.out or given.with_suffix(".html")
        if out.resolve() == given.resolve():
            raise EnvportError(f"--out {out} is the report itself; name another file")
        path = write_verify_page(read_verify_report(given), out)
    else:
        path = write_report(args.run, out=args.out, bench=args.bench)
    print(path)
    return EXIT_OK
