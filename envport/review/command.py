"""`envport review RUN [--iteration K] [--full]`: a run's repair transcript in the terminal."""

from __future__ import annotations

import argparse

from rich.console import Group, RenderableType
from rich.text import Text

from envport.errors import EXIT_OK, EnvportError
from envport.io.inert import InertConsole
from envport.review.terminal import detail, overview, show
from envport.review.timeline import read_timeline
from envport.runs.events import iteration_range, read_events
from envport.runs.layout import open_run
from envport.runs.snapshot import pin_replays, pinned_note


def _step(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an iteration number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected 0 or more, got {text}")
    return value


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "review",
        help="read a run's transcript: iterations with levels and cost, or one in full",
    )
    parser.add_argument("run", help="the run directory, runs/<run-id>")
    parser.add_argument(
        "--iteration",
        type=_step,
        metavar="K",
        help="show iteration K (the # column): prompt, answer, diff, checks",
    )
    parser.add_argument(
        "--full",
        action="store_true",
        help="with --iteration: the whole system prompt and stable prefix too",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    run_dir = open_run(args.run)
    state = run_dir.load()
    timeline = read_timeline(run_dir.transcript)
    console = InertConsole(highlight=False, soft_wrap=True)
    if not console.is_terminal:
        # A pipe or a file has no width; long lines beat a table wrapped at 80 columns.
        console = InertConsole(highlight=False, soft_wrap=True, width=160)
    if args.iteration is None:
        show(console, overview(state, timeline, args.run))
        return EXIT_OK
    iteration = timeline.find(args.iteration)
    if iteration is None:
        # Named as `--port RUN@K` names them (envport.runs.snapshot), from the same events.
        known = iteration_range(list(read_events(run_dir.transcript)))
        raise EnvportError(
            f"--iteration {args.iteration}: no such iteration (this run has {known})"
        )
    # RUN/port is the port as the run left it, repaired since: the replays of this
    # iteration's divergences run the port it checked.
    pinned = pin_replays(iteration.checks, run_dir, iteration.step, args.run)
    shown: RenderableType = detail(iteration, timeline, full=args.full, color=console.is_terminal)
    if pinned:
        shown = Group(Text(pinned_note(args.run, iteration.step), style="dim"), shown)
    show(console, shown)
    return EXIT_OK
