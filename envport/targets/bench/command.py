"""`envport bench`: steps per second of the reference, a port and anchors, by batch size."""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path

from envport.errors import EXIT_OK, EnvportError
from envport.io.inert import say
from envport.targets.bench.run import DEFAULT_BATCH_SIZES, BenchOptions
from envport.targets.registry import TARGET_CHOICES


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _sizes(text: str) -> tuple[int, ...]:
    parts = [part.strip() for part in text.split(",") if part.strip()]
    if not parts:
        raise argparse.ArgumentTypeError("expected a comma list of batch sizes, e.g. 32,512,4096")
    return tuple(dict.fromkeys(_positive(part) for part in parts))


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "bench",
        help="steps per second of the reference, a port and anchors across batch sizes",
    )
    p.add_argument("spec", help="envport.toml or the directory holding it")
    p.add_argument("--port", required=True, help="directory of the port")
    p.add_argument("--target", default="auto", choices=TARGET_CHOICES)
    p.add_argument(
        "--batch-sizes",
        type=_sizes,
        default=DEFAULT_BATCH_SIZES,
        help=f"comma list (default {','.join(map(str, DEFAULT_BATCH_SIZES))})",
    )
    p.add_argument(
        "--anchor",
        action="append",
        default=[],
        help="a published JAX implementation to compare: gymnax:EnvId, xminigrid:EnvId or "
        "pgx:EnvId; repeat it to time several in one run",
    )
    p.add_argument("--steps", type=_positive, default=1000, help="steps per env in a timed run")
    p.add_argument("--repeats", type=_positive, default=3, help="timed runs; the best counts")
    p.add_argument(
        "--sync-envs", type=_positive, default=32, help="envs in the reference SyncVectorEnv"
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per worker request")
    p.add_argument("--json", type=Path, help="write the results as JSON here")
    p.add_argument("--plot", type=Path, help="write a PNG plot of SPS against batch size here")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from envport.targets.bench.report import console, plot, table
    from envport.targets.bench.run import run_bench

    if args.plot and importlib.util.find_spec("matplotlib") is None:
        raise EnvportError("--plot needs matplotlib: pip install 'envport[plot]'")
    options = BenchOptions(
        batch_sizes=args.batch_sizes,
        steps=args.steps,
        repeats=args.repeats,
        sync_envs=args.sync_envs,
        timeout=args.timeout,
        seed=args.seed,
    )
    # Each part as it is measured, on stderr: stdout is the table.
    report = run_bench(
        args.spec,
        args.port,
        options,
        target=args.target,
        anchors=args.anchor,
        progress=lambda text: say(f"bench: {text}"),
    )
    console().print(table(report))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(report.model_dump_json(indent=2), encoding="utf-8")
    if args.plot:
        plot(report, args.plot)
    return EXIT_OK
