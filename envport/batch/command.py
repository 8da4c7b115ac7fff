"""`envport batch BATCH.toml [--retry-failed]`: run many ports, concurrently, under caps.

Exit codes: 0 every run verified, 1 some run did not (gave up, failed, not started under
the total cap), 2 usage error (the batch file), 130 interrupted (run it again to continue).
"""

from __future__ import annotations

import argparse

from envport.io.inert import InertConsole
from envport.scale.cluster import add_executor_options


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "batch",
        help="translate many spec x target x model runs, concurrently, under cost caps; "
        "run again to continue",
    )
    parser.add_argument("file", help="the batch file, BATCH.toml (see docs/commands.md)")
    parser.add_argument(
        "--retry-failed",
        action="store_true",
        help="also retry runs that gave up or failed (with the batch file's current limits)",
    )
    add_executor_options(parser, "the runs")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from envport import interrupts
    from envport.batch.config import load_batch
    from envport.batch.runner import BatchRunner

    plan = load_batch(args.file)
    interrupts.install(repeat=True)  # SIGTERM stops the runs as Ctrl-C does
    console = InertConsole(highlight=False)
    if not console.is_terminal:
        # A log has no width: whole lines read better than a table wrapped at 80 columns.
        console = InertConsole(highlight=False, width=160)
    runner = BatchRunner(
        plan, console, retry_failed=args.retry_failed, executor=args.executor, address=args.address
    )
    return runner.run()
