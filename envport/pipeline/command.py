"""`envport translate SPEC --target T` and `envport resume RUN`: arguments and exit codes.

Exit codes: 0 verified, 1 gave up (a budget ended or the loop got stuck), 2 usage error,
130 interrupted by Ctrl-C and 143 by SIGTERM (the run is saved at its last completed step;
`envport resume RUN` continues it).
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from envport.pipeline import TRANSLATE_TARGETS

if TYPE_CHECKING:
    from envport.pipeline.translate import LimitOverrides
    from envport.runs.state import OptimizeSettings

DEFAULT_OPTIMIZE_ROUNDS = 3


def _whole(minimum: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected {minimum} or more, got {text}")
        return value

    return parse


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text}")
    return value


def _run_id(text: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]*", text):
        raise argparse.ArgumentTypeError(
            f"{text!r}: a run id is letters, digits, '_', '-' and '.' (not first)"
        )
    return text


def _batch_sizes(text: str) -> list[int]:
    parts = [part.strip() for part in text.split(",") if part.strip()]
    if not parts:
        raise argparse.ArgumentTypeError("expected a comma list of batch sizes, e.g. 32,512,8192")
    # Ascending, so the largest (the one an optimisation is judged by) is benched last.
    return sorted({_whole(1)(part) for part in parts})


def _add_optimize(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("optimisation (after every level passes)")
    group.add_argument(
        "--optimize",
        action="store_true",
        help="then ask for faster versions; keep one only if every level passes and SPS at "
        "the largest batch improves by 5%% or more",
    )
    group.add_argument(
        "--optimize-rounds",
        type=_whole(1),
        help=f"optimise prompts to send (default {DEFAULT_OPTIMIZE_ROUNDS})",
    )
    group.add_argument(
        "--bench-batch-sizes",
        type=_batch_sizes,
        help="comma list; SPS at the largest decides (default 32,512,8192)",
    )
    group.add_argument(
        "--bench-steps", type=_whole(1), help="steps per env in one timed run (default 200)"
    )
    group.add_argument(
        "--bench-repeats",
        type=_whole(1),
        help="timed runs of each version, interleaved; the best counts (default 5)",
    )


def _optimize_settings(args: argparse.Namespace) -> OptimizeSettings:
    from envport.errors import EnvportError
    from envport.runs.state import OptimizeSettings

    given = {
        "--optimize-rounds": args.optimize_rounds,
        "--bench-batch-sizes": args.bench_batch_sizes,
        "--bench-steps": args.bench_steps,
        "--bench-repeats": args.bench_repeats,
    }
    if not args.optimize:
        stray = [flag for flag, value in given.items() if value is not None]
        if stray:
            raise EnvportError(f"{', '.join(stray)} only apply with --optimize")
        return OptimizeSettings()
    values = {
        "rounds": args.optimize_rounds or DEFAULT_OPTIMIZE_ROUNDS,
        "batch_sizes": args.bench_batch_sizes,
        "steps": args.bench_steps,
        "repeats": args.bench_repeats,
    }
    return OptimizeSettings(**{k: v for k, v in values.items() if v is not None})


def _add_budgets(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--max-iterations",
        type=_whole(0),
        help="repairs per module and per level before giving up (default 4)",
    )
    parser.add_argument("--budget-usd", type=_positive_float, help="dollar cap for model calls")
    parser.add_argument("--budget-tokens", type=_whole(1), help="token cap for model calls")
    parser.add_argument(
        "--max-minutes", type=_positive_float, help="wall-time cap of the run (default 60)"
    )
    parser.add_argument(
        "--stuck-after",
        type=_whole(2),
        help="the same divergence this many times in a row is stuck (default 3)",
    )
    calls = parser.add_argument_group("model calls")
    calls.add_argument(
        "--call-timeout",
        type=_positive_float,
        metavar="SECONDS",
        help="total deadline of one attempt of a model call, answer included (default 180)",
    )
    calls.add_argument(
        "--call-attempts",
        type=_whole(1),
        metavar="N",
        help="attempts per model call, the first included, for transient failures (default 6)",
    )


def _overrides(args: argparse.Namespace) -> LimitOverrides:
    from envport.pipeline.translate import LimitOverrides

    return LimitOverrides(
        max_iterations=args.max_iterations,
        max_usd=args.budget_usd,
        max_tokens=args.budget_tokens,
        max_minutes=args.max_minutes,
        stuck_after=args.stuck_after,
        call_timeout_s=args.call_timeout,
        call_attempts=args.call_attempts,
    )


def add_translate(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "translate",
        help="port a reference env with a model, verify it, repair until every level passes",
    )
    parser.add_argument("spec", help="envport.toml or the directory holding it")
    parser.add_argument("--target", required=True, choices=TRANSLATE_TARGETS)
    parser.add_argument(
        "--model",
        help="anthropic:<model>, openai:<model> or replay:<session dir> (default: the "
        "example's replay session when no API key is set)",
    )
    parser.add_argument("--base-url", help="API base URL (OpenAI-compatible servers, proxies)")
    parser.add_argument("--out", type=Path, default=Path("runs"), help="runs directory")
    parser.add_argument(
        "--run-id",
        type=_run_id,
        help="name of the run's directory in --out (default <spec>-<target>-<time>-<random>)",
    )
    parser.add_argument("--prompts", help="directory of .j2 templates overriding the shipped ones")
    _add_budgets(parser)
    _add_optimize(parser)
    parser.set_defaults(func=_run_translate)


def add_resume(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "resume", help="continue an interrupted or stopped translate run from its last step"
    )
    parser.add_argument("run", help="the run directory, runs/<run-id>")
    parser.add_argument("--base-url", help="API base URL, if it changed since the run began")
    _add_budgets(parser)
    parser.set_defaults(func=_run_resume)


def _console() -> Console:
    return Console(highlight=False, soft_wrap=True)


def _run_translate(args: argparse.Namespace) -> int:
    # Imported when used: the driver pulls in the model layer, git and the verifier.
    from envport import interrupts
    from envport.pipeline.translate import translate

    interrupts.install()
    optimize = _optimize_settings(args)
    return translate(
        args.spec,
        args.target,
        model=args.model,
        base_url=args.base_url,
        out=args.out,
        run_id=args.run_id,
        prompts_dir=args.prompts,
        limits=_overrides(args),
        console=_console(),
        optimize=optimize,
    )


def _run_resume(args: argparse.Namespace) -> int:
    from envport import interrupts
    from envport.pipeline.translate import resume

    interrupts.install()
    return resume(args.run, base_url=args.base_url, limits=_overrides(args), console=_console())
