"""`envport bench`: steps per second of the reference, a port and anchors, by batch size.

The timing is `envport.targets.bench`'s; here, above it, each size is first checked: one
step of the port at that size against the reference's (`levels.l2.tiled`, as l2.sizes steps
it), so no speed is printed for a size the port gets wrong. Here because the comparison (the
spec's tolerances, fields named) is the verifier's, and the targets never import it.
"""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path

from envport.errors import EXIT_DIVERGED, EXIT_OK, EnvportError
from envport.io.inert import say
from envport.serve.ops import Requester
from envport.spec import load_spec
from envport.targets.bench.anchors import anchor_kind, foreign_anchor
from envport.targets.bench.report import BenchReport
from envport.targets.bench.run import DEFAULT_BATCH_SIZES, BenchOptions, SizeCheck
from envport.targets.reference import Reference
from envport.targets.registry import TARGET_CHOICES, choose_target
from envport.verifiers.levels.l2.tiled import DistinctSteps


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
        help="a published JAX implementation to compare: gymnax:EnvId, xminigrid:EnvId, "
        "pgx:EnvId, or bridge:DIR (a third-party env through the bridge port that verifies "
        "it, e.g. JaxMARL's); repeat it to time several in one run",
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
    _same_game(args.spec, args.anchor)
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
        check=size_check(args.spec, args.seed, args.port, args.target),
        progress=lambda text: say(f"bench: {text}"),
    )
    console().print(table(report))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(report.model_dump_json(indent=2), encoding="utf-8")
    if args.plot:
        plot(report, args.plot)
    return _verdict(report)


def _same_game(spec_arg: str, anchors: list[str]) -> None:
    """Refuse an anchor of another game (`pgx:chess` on Connect Four), in one line."""
    if not anchors:
        return
    spec = load_spec(spec_arg)
    names = f"{spec.name} {spec.reference.entry}"
    for anchor in anchors:
        if anchor_kind(anchor) is None:
            continue  # the worker's load says what is wrong with its form
        other = foreign_anchor(anchor, names)
        if other is not None:
            raise EnvportError(
                f"--anchor {anchor}: an anchor of another game ({other}), not of this spec's "
                f"{spec.name} ({spec.reference.entry}): name the same game's id"
            )


def size_check(spec_arg: str, seed: int, port_arg: str, target: str) -> SizeCheck:
    """One step of the port at a size against the reference's: the first differing env and
    fields as one line, or None. The reference's DISTINCT steps are played once, at the
    first size asked. Compared within the tolerances `verify` holds this target's port to."""
    loaded = load_spec(spec_arg)
    spec = loaded.for_target(choose_target(loaded, Path(port_arg), target).name)
    played: list[DistinctSteps] = []

    def check(worker: Requester, size: int) -> str | None:
        if not played:
            played.append(DistinctSteps.played(Reference(spec), seed))
        outcome = played[0].step(spec, worker, size)
        return None if outcome.passed else outcome.line()

    return check


def _verdict(report: BenchReport) -> int:
    """Exit 1 (a failed check, as `verify`'s divergence) when the port diverged at any size,
    with one line naming the sizes and the first difference."""
    diverged = report.diverged()
    if not diverged:
        return EXIT_OK
    sizes = ", ".join(f"B={row.batch}" for row in diverged)
    say(
        f"envport: no speed reported at {sizes}, where the port's step differs from the "
        f"reference's (`envport verify` shows it): {diverged[0].diverged}"
    )
    return EXIT_DIVERGED
