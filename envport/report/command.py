"""`envport report RUN [--out FILE] [--bench FILE]`: write the run's HTML report."""

from __future__ import annotations

import argparse
from pathlib import Path

from envport.errors import EXIT_OK, EnvportError


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "report",
        help="write a run's report as one self-contained HTML page (timeline, diffs, plots)",
    )
    parser.add_argument("run", help="the run directory, runs/<run-id>")
    parser.add_argument(
        "--out", type=Path, help="where to write it (default RUN/reports/report.html)"
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
    path = write_report(args.run, out=args.out, bench=args.bench)
    print(path)
    return EXIT_OK
