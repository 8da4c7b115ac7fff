"""`envport translate SPEC|ENV --target T` and `envport resume RUN`: arguments and exit codes.

Exit codes: 0 verified, 1 gave up (a budget ended or the loop got stuck), 2 usage error,
130 interrupted by Ctrl-C and 143 by SIGTERM (the run is saved at its last completed step;
`envport resume RUN` continues it).
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from pathlib import Path

from pydantic import ValidationError
from rich.console import Console

from envport.errors import EnvportError
from envport.gaps import add_strict_option
from envport.io.inert import InertConsole
from envport.pipeline import TRANSLATE_TARGETS
from envport.runs.options import (
    DEFAULT_OPTIMIZE_ROUNDS,
    OPTIMIZE_KEYS,
    Limits,
    ResumeOptions,
    RunOptions,
    TranslateOptions,
    optimize_settings,
)


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


def _optimize_given(args: argparse.Namespace) -> dict[str, object]:
    return {key: getattr(args, key) for key in OPTIMIZE_KEYS}


def _check_optimize(args: argparse.Namespace) -> None:
    if not args.optimize:
        stray = [_flag(key) for key, value in _optimize_given(args).items() if value is not None]
        if stray:
            raise EnvportError(f"{', '.join(stray)} only apply with --optimize")


# The limits a user may give, by their one name (a Limits field, a BATCH.toml key; the flag
# is the name with dashes): the argparse type and help of each. `answer_tokens` has no flag.
BUDGET_FLAGS: dict[str, tuple[Callable[[str], object], str]] = {
    "max_iterations": (_whole(0), "repairs per module and per level before giving up (default 4)"),
    "budget_usd": (_positive_float, "dollar cap for model calls, the whole run"),
    "budget_tokens": (_whole(1), "token cap for model calls, the whole run"),
    "max_minutes": (_positive_float, "wall-time cap of the run (default 60)"),
    "stuck_after": (_whole(2), "the same divergence this many times in a row is stuck (default 3)"),
}
CALL_FLAGS: dict[str, tuple[Callable[[str], object], str, str]] = {
    "call_timeout": (
        _positive_float,
        "SECONDS",
        "total deadline of one attempt of a model call, answer included (default 180)",
    ),
    "call_attempts": (
        _whole(1),
        "N",
        "attempts per model call, the first included, for transient failures (default 6)",
    ),
}


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _add_budgets(parser: argparse.ArgumentParser) -> None:
    for name, (kind, text) in BUDGET_FLAGS.items():
        parser.add_argument(_flag(name), type=kind, help=text)
    calls = parser.add_argument_group("model calls")
    for name, (kind, metavar, text) in CALL_FLAGS.items():
        calls.add_argument(_flag(name), type=kind, metavar=metavar, help=text)


def _limits(args: argparse.Namespace) -> Limits:
    """The limits given on the command line (only they are set: see envport.runs.options)."""
    given = {name: getattr(args, name) for name in (*BUDGET_FLAGS, *CALL_FLAGS)}
    try:
        return Limits.model_validate({k: v for k, v in given.items() if v is not None})
    except ValidationError as error:
        first = error.errors()[0]
        name = str(first["loc"][0]) if first["loc"] else "limits"
        raise EnvportError(f"{_flag(name)}: {first['msg']}") from None


def translate_options(args: argparse.Namespace) -> TranslateOptions:
    """What `envport translate` was told, as the one options model."""
    _check_optimize(args)
    return TranslateOptions(
        spec=args.spec,
        target=args.target,
        model=args.model,
        base_url=args.base_url,
        out=args.out,
        run_id=args.run_id,
        prompts=args.prompts,
        limits=_limits(args),
        optimize=optimize_settings(args.optimize, _optimize_given(args)),
        strict=args.strict,
    )


def resume_options(args: argparse.Namespace) -> ResumeOptions:
    return ResumeOptions(run=args.run, base_url=args.base_url, limits=_limits(args))


def _word(value: object) -> str:
    return f"{value:.10g}" if isinstance(value, float) else str(value)


def command_words(options: RunOptions, *, base_url: bool = False) -> list[str]:
    """The command line that gives these options, for a log or a message to a person (a
    base URL may carry credentials: shown only when asked). Never parsed back: a batch
    hands its runs the options themselves (envport.batch.child)."""
    if isinstance(options, ResumeOptions):
        words = ["resume", options.run]
    else:
        words = ["translate", options.spec, "--target", options.target]
        for flag, value in (
            ("--model", options.model),
            ("--out", options.out),
            ("--run-id", options.run_id),
            ("--prompts", options.prompts),
        ):
            if value is not None:
                words += [flag, str(value)]
        if options.strict:
            words.append("--strict")
        if options.optimize.rounds:
            words.append("--optimize")
            settings = options.optimize.model_dump(exclude_unset=True)
            for key, field in OPTIMIZE_KEYS.items():
                if field in settings:
                    value = settings[field]
                    text = ",".join(map(str, value)) if isinstance(value, list) else _word(value)
                    words += [_flag(key), text]
    given = options.limits.given()
    for name in (*BUDGET_FLAGS, *CALL_FLAGS):
        if name in given:
            words += [_flag(name), _word(given[name])]
    if base_url and options.base_url:
        words += ["--base-url", options.base_url]
    return words


def add_translate(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "translate",
        help="port a reference env with a model, verify it, repair until every level passes",
    )
    parser.add_argument(
        "spec",
        help="envport.toml or the directory holding it; or an environment (gymnasium:<EnvId>, "
        "a registered Gymnasium id, package.module:factory) to infer the spec from",
    )
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
    add_strict_option(parser)
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
    return InertConsole(highlight=False, soft_wrap=True)


def run(options: RunOptions) -> int:
    """Translate or resume, as the command line (or a batch's child) asked."""
    # Imported when used: the driver pulls in the model layer, git and the verifier.
    from envport import interrupts
    from envport.pipeline.translate import resume, translate

    interrupts.install()
    if isinstance(options, ResumeOptions):
        return resume(options, _console())
    return translate(options, _console())


def _run_translate(args: argparse.Namespace) -> int:
    return run(translate_options(args))


def _run_resume(args: argparse.Namespace) -> int:
    return run(resume_options(args))
