"""Command line: parse, validate, call one function per command.

Every error a user can act on is printed as one line on stderr with exit code 2 (usage,
spec) or 1 (the port failed); no traceback reaches the terminal.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from envport.verifiers.verify import VerifyOptions

from envport import heap, interrupts
from envport.errors import EXIT_DIVERGED, EXIT_OK, EXIT_USAGE
from envport.exits import finish, leave
from envport.gaps import add_strict_option
from envport.io.inert import say
from envport.scale.cluster import add_executor_options
from envport.targets.registry import AUTO, TARGET_CHOICES

# What `envport --help` says the tool is (this module's docstring is about the module).
DESCRIPTION = (
    "Port a reference RL environment (a Gymnasium env, or a PettingZoo two-player game) "
    "to a fast backend (JAX, batched NumPy, Rust) with an LLM, and prove the port behaves "
    "like the reference: L1 property, L2 interaction and L3 rollout checks, with repairs "
    "from each divergence."
)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        # argparse prints the whole usage block; one line is the house style.
        self.exit(EXIT_USAGE, f"envport: {message} (see `{self.prog} --help`)\n")


def _positive(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text}")
    return value


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(
            f"expected a whole number of steps (0 or more), got {text}"
        )
    return value


def _episodes(text: str) -> int | tuple[int, int]:
    """`E` (one episode) or `A-B` (a batch of episodes, as a replay line gives them)."""
    first, dash, last = text.partition("-")
    try:
        if not dash:
            return int(text)
        return int(first), int(last)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected E or A-B, got {text!r}") from None


def _levels(text: str) -> tuple[str, ...]:
    return tuple(part.strip().lower() for part in text.split(",") if part.strip())


def _add_verify(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "verify",
        help="check a port against its reference (CI gate: exit 0 pass, 1 divergence, 2 usage)",
    )
    p.add_argument("spec", help="envport.toml or the directory holding it")
    p.add_argument(
        "--port",
        required=True,
        help="directory of the port's modules, or RUN@K: a run's port as it was at iteration K",
    )
    p.add_argument("--target", default=AUTO, choices=list(TARGET_CHOICES))
    p.add_argument(
        "--levels",
        type=_levels,
        default=("l1", "l2", "l3"),
        help="comma list of l1,l2,l3,l4 (default l1,l2,l3; l4 trains policies: slow)",
    )
    p.add_argument("--module", help="check one module of the port (L1 probes and exports)")
    p.add_argument("--examples", type=_positive, help="hypothesis examples for L1 and L2")
    p.add_argument(
        "--no-shrink", action="store_true", help="report L1/L2 failures as found, unshrunk"
    )
    p.add_argument("--episodes", type=_positive, help="L3 episodes (default from the spec)")
    p.add_argument("--steps", type=_positive, help="L3 steps per episode at most")
    p.add_argument("--mode", choices=["free", "resync", "both"], help="L3 rollout mode")
    p.add_argument("--seed", type=int, default=0, help="seed of the episode plan")
    p.add_argument(
        "--episode",
        type=_episodes,
        metavar="E|A-B",
        help="run only episode E of the plan, or episodes A..B played as one batch (replay)",
    )
    p.add_argument("--timeout", type=float, default=120.0, help="seconds per port request")
    p.add_argument("--cases", type=Path, help="directory of proposed cases (*.toml) to run as well")
    p.add_argument(
        "--port-server",
        metavar="ADDRESS",
        help="use the port hosted by `envport serve` at ADDRESS instead of a local worker; "
        "its token comes from ENVPORT_SERVE_TOKEN or --port-server-token-file",
    )
    p.add_argument(
        "--port-server-token-file",
        type=Path,
        metavar="FILE",
        help="read the `envport serve` token from FILE (kept off the command line)",
    )
    p.add_argument(
        "--workers",
        type=_positive,
        help="L3 lanes, each a reference player and a port worker (default: one per core "
        "when there are at least 250 episodes per lane)",
    )
    add_executor_options(p, "L3's chunks")
    p.add_argument(
        "--reverse-injection",
        action="store_true",
        help="for a port that cannot load a state (envpool): start the reference from the "
        "port's own start states, read by its getter or from the observation "
        "(state.from_observation); L1, L2 and L4 do not apply",
    )
    p.add_argument(
        "--strict-bounds",
        action="store_true",
        help="fail when more than 1%% of the states L3's reference visits lie outside a "
        "field's [state.bounds] (without it: a warning)",
    )
    p.add_argument(
        "--explore-steps",
        type=_non_negative,
        metavar="N",
        help="reference steps l3.explore may take to reach branches no level reached "
        "(default: the spec's [coverage] explore_steps; 0: no exploration)",
    )
    add_strict_option(p)
    p.add_argument(
        "--fail-fast",
        action="store_true",
        help="stop at the first check that fails (the report names the checks not run)",
    )
    p.add_argument(
        "--no-static-review",
        action="store_true",
        help="run a port the static review refuses (to test the sandbox's own layers with "
        "hostile code; the verdict then does not hold for a port that notices it is watched)",
    )
    p.add_argument("--junit", type=Path, help="write JUnit XML here")
    p.add_argument("--json", type=Path, help="write the full report as JSON here")
    p.add_argument(
        "--html",
        type=Path,
        metavar="FILE",
        help="write the report as one self-contained HTML page here: the verdict, each "
        "check, each divergence with its grid pictures and replay line (`envport report "
        "VERIFY.json` writes the same page from a --json file)",
    )
    p.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="after the verdict, where each check's time went (reference, port worker by "
        "request, drawing, judging)",
    )
    p.set_defaults(func=_run_verify)


def verify_options(args: argparse.Namespace) -> VerifyOptions:
    """The verifier's options from parsed `verify` arguments (also used to run replays)."""
    from envport.verifiers.verify import VerifyOptions

    return VerifyOptions(
        levels=args.levels,
        target=args.target,
        episodes=args.episodes,
        steps=args.steps,
        mode=args.mode,
        seed=args.seed,
        only_episode=args.episode if isinstance(args.episode, int) else None,
        episode_batch=args.episode if isinstance(args.episode, tuple) else None,
        timeout=args.timeout,
        module=args.module,
        examples=args.examples,
        shrink=not args.no_shrink,
        workers=args.workers,
        port_server=args.port_server,
        port_server_token_file=args.port_server_token_file,
        cases=args.cases,
        reverse=args.reverse_injection,
        strict_bounds=args.strict_bounds,
        explore_steps=args.explore_steps,
        strict=args.strict,
        fail_fast=args.fail_fast,
        static_review=not args.no_static_review,
        executor=args.executor,
        address=args.address,
    )


def _port_at(port_arg: str) -> AbstractContextManager[tuple[Path, str | None]]:
    """`--port`: a directory, or `RUN@K`, a run's port read from its git history (only then
    are the run's modules and git imported)."""
    if "@" not in port_arg:
        return nullcontext((Path(port_arg), None))
    from envport.runs.snapshot import port_at

    return port_at(port_arg)


def _run_verify(args: argparse.Namespace) -> int:
    from envport.io.inert import InertConsole
    from envport.verifiers.reporting.junit import write_junit
    from envport.verifiers.reporting.profile_table import profile_lines
    from envport.verifiers.reporting.watch import VerifyProgress
    from envport.verifiers.verify import verify

    # Progress on stderr: stdout carries the report alone.
    progress = VerifyProgress(InertConsole(stderr=True, highlight=False, soft_wrap=True))
    with _port_at(args.port) as (port, checked_out):
        shown_as = args.port if checked_out else None
        try:
            with progress:
                report = verify(
                    args.spec,
                    str(port),
                    verify_options(args),
                    shown_as=shown_as,
                    profile=progress.profile,
                )
        except KeyboardInterrupt:
            progress.interrupted()
            raise
    if checked_out:
        report.notes.insert(0, checked_out)
    if args.json:
        args.json.write_text(report.model_dump_json(indent=2), encoding="utf-8")
    if args.junit:
        write_junit(report, args.junit)
    if args.html:
        from envport.report.verify_page import write_verify_page

        write_verify_page(report, args.html)
    if report.error:
        # The port could not be run at all: one line, in the port's own words.
        say(f"envport: {report.error}")
        if args.verbose:
            say("\n".join(profile_lines(report.profile)))
        return EXIT_DIVERGED
    console = InertConsole(highlight=False, soft_wrap=True)
    console.print(report.text(), markup=False)
    style = "bold red" if not report.passed else "bold yellow" if report.gaps else "bold green"
    console.print(report.verdict(), style=style, markup=False)
    if args.verbose:
        console.print("\n".join(profile_lines(report.profile)), markup=False)
    return EXIT_OK if report.passed else EXIT_DIVERGED


# Every command but verify: the module and function that add its parser, imported only when
# that command (or the whole --help) is asked for, so `envport verify` loads none of the
# translate, init, review or report code. In `envport --help` order.
_COMMANDS: dict[str, tuple[str, str]] = {
    "init": ("envport.init.command", "add_parser"),
    "audit": ("envport.audit.command", "add_parser"),
    "serve": ("envport.targets.serve_command", "add_parser"),
    "translate": ("envport.pipeline.command", "add_translate"),
    "resume": ("envport.pipeline.command", "add_resume"),
    "bench": ("envport.verifiers.bench_command", "add_parser"),
    "review": ("envport.review.command", "add_parser"),
    "report": ("envport.report.command", "add_parser"),
    "batch": ("envport.batch.command", "add_parser"),
    "check": ("envport.pipeline.spec_check", "add_parser"),
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line; given a known `command`, only that command's parser is built (an
    unknown one, or none, builds them all, for --help and argparse's list of choices)."""
    parser = _Parser(
        prog="envport",
        description=DESCRIPTION,
        epilog="Start offline: envport translate examples/cartpole --target jax "
        "(README.md, then docs/, has the rest).",
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    known = command == "verify" or command in _COMMANDS
    if not known or command == "verify":
        _add_verify(sub)
    for name, (module, function) in _COMMANDS.items():
        if not known or command == name:
            getattr(importlib.import_module(module), function)(sub)
    for name in _RUNS_PORTS:
        if name in sub.choices:
            sub.choices[name].add_argument(
                "--unsafe-no-sandbox",
                action="store_true",
                help="run generated code without bubblewrap's isolation (when it is not "
                "installed): the port gets this user's files, processes and network",
            )
    return parser


# Commands that run generated code in workers, and so need the sandbox.
_RUNS_PORTS = ("verify", "serve", "translate", "resume", "bench", "batch")


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None:
        # The process's own command line (not a caller's in-process call): its signals are
        # envport's to handle from the start.
        interrupts.install(repeat=True)
        # Hypothesis loads every installed package's Hypothesis plugin on import (trio's
        # pulls in pytest: a quarter second). envport's strategies draw no third-party type
        # and run no trio scheduler, so its own process loads none (a user's setting wins).
        os.environ.setdefault("HYPOTHESIS_NO_PLUGINS", "1")
        heap.collect_in_batches()
    words = list(sys.argv[1:] if argv is None else argv)
    code = finish(lambda: _run(words), words, own_signals=argv is None)
    # In its own process the command line ends the process; a caller's in-process call
    # gets the code back.
    return leave(code) if argv is None else code


def _run(words: list[str]) -> int:
    command = words[0] if words and not words[0].startswith("-") else None
    args = build_parser(command).parse_args(words)
    if getattr(args, "unsafe_no_sandbox", False):
        from envport.serve.jail import allow_unsandboxed

        allow_unsandboxed()
    return int(args.func(args))


if __name__ == "__main__":
    raise SystemExit(main())
