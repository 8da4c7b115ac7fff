"""How long `envport verify` takes: the whole command per checkout, and L3 against the reference.

    python benchmarks/verify_speed.py [--repo OTHER_CHECKOUT] [--command-repeats 3]
        [--ports cartpole:numpy,cartpole:jax] [--episodes 100] [--steps 500] [--repeats 7]
        [--cold]

The whole command: `envport verify examples/E --port examples/E/ports/B` as a user runs it,
a subprocess timed by the wall clock, median of `--command-repeats`, with its breakdown
(verify_command.py says how), for this checkout and each `--repo`, so before and after come
from one run on one machine.
Each checkout's runs share a cache home that its warm-up run fills, so a JAX port's timed
runs load its compiled programs (warm); `--cold` gives every timed run an empty one, as a
port's first verify has it.

L3 next to the time the reference alone needs for the same transitions:

For each known-good CartPole port, in one process: the reference alone replays exactly the
transitions L3 compares (same reset seeds, same actions, no state reads, nothing kept), and
L3 (both modes, the same code `verify` runs) checks the port in a worker started once.
The two are timed alternately, `--repeats` times each, and the best of each is compared:
this machine is shared, and a process's speed swings by up to 2x from one second to the
next. The fixed costs one `verify` pays on top, whatever the episode count, are stated
apart: worker start-up and port import, and JAX compilation (the first L3 run's extra).
Prints the tables and writes benchmarks/results/verify_speed.json (or `--json`).
"""

from __future__ import annotations

import argparse
import gc
import json
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table
from verify_command import Checkout, CommandTiming, time_command

from envport.serve.client import PortWorker
from envport.spec import load_spec
from envport.targets.reference import Reference
from envport.targets.registry import choose_target
from envport.verifiers.levels.l3 import lanes as l3_lanes
from envport.verifiers.levels.l3 import rollout as l3
from envport.verifiers.levels.l3.played import Played
from envport.verifiers.options import L3Options, VerifyOptions
from envport.verifiers.reporting.replay import Replay

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "cartpole"
RESULTS = ROOT / "benchmarks" / "results" / "verify_speed.json"


def reference_alone(played: Played, reference: Reference) -> float:
    """Bare stepping of the same transitions (the collector paused, as L3's play has it)."""
    actions = played.actions.tolist()
    starts, lengths = played.starts.tolist(), played.lengths.tolist()
    gc.disable()
    started = time.perf_counter()
    for plan, start, length in zip(played.plans, starts, lengths, strict=True):
        reference.reset(plan.reset_seed)
        if plan.late_start is not None:
            reference.env._elapsed_steps = plan.late_start
        for action in actions[start : start + length]:
            reference.step(action)
    seconds = time.perf_counter() - started
    gc.enable()
    return seconds


def measure(backend: str, options: L3Options, repeats: int) -> dict:
    spec = load_spec(EXAMPLE)
    reference = Reference(spec)
    played = l3.play_reference(reference, spec, options)
    port = EXAMPLE / "ports" / backend
    load = choose_target(spec, port, "auto").load(port)
    replay = Replay("l3", str(EXAMPLE), str(port), VerifyOptions())
    started = time.perf_counter()
    with PortWorker(load=load) as worker:
        worker.receive()
        startup = time.perf_counter() - started

        def run() -> tuple[float, float]:
            began = time.perf_counter()
            levels = l3_lanes.run_l3(spec, options, replay, worker, reference)
            assert all(level.passed for level in levels), [lv.summary() for lv in levels]
            compile_s = sum(level.seconds.get("port_compile", 0.0) for level in levels)
            return time.perf_counter() - began, compile_s

        first, compile_s = run()
        alone, steady = [], []
        for _ in range(repeats):
            alone.append(reference_alone(played, reference))
            steady.append(run()[0])
    best_alone, best_l3 = min(alone), min(steady)
    return {
        "backend": backend,
        "episodes": options.episodes,
        "transitions": played.transitions,
        "reference_alone_s": best_alone,
        "l3_s": best_l3,
        "ratio": best_l3 / best_alone,
        "median_ratio": sorted(s / a for s, a in zip(steady, alone, strict=True))[repeats // 2],
        "first_l3_s": first,
        "jax_compile_s": compile_s,
        "worker_startup_s": startup,
    }


def l3_table(rows: list[dict], episodes: int, repeats: int) -> Table:
    table = Table(title=f"L3, {episodes} episodes, both modes: best of {repeats}")
    columns = ["port", "transitions", "reference alone", "L3", "ratio (target <= 3)"]
    columns += ["median ratio", "first L3", "of which compile", "worker start-up"]
    for column in columns:
        table.add_column(column, justify="right")
    for r in rows:
        table.add_row(
            r["backend"],
            str(r["transitions"]),
            f"{r['reference_alone_s'] * 1e3:.1f} ms",
            f"{r['l3_s'] * 1e3:.1f} ms",
            f"{r['ratio']:.2f}",
            f"{r['median_ratio']:.2f}",
            f"{r['first_l3_s'] * 1e3:.0f} ms",
            f"{r['jax_compile_s'] * 1e3:.0f} ms",
            f"{r['worker_startup_s'] * 1e3:.0f} ms",
        )
    return table


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def command_table(timings: list[CommandTiming], repeats: int) -> Table:
    table = Table(title=f"envport verify, whole command: median of {repeats} (seconds)")
    columns = ["checkout", "port", "wall", "verify --help", "outside total", "setup"]
    columns += ["worker wait", "l1", "l2", "l3", "of which L3 compile", "plain", "coverage"]
    columns += ["total"]
    for column in columns:
        table.add_column(column, justify="right")
    for t in timings:
        total = t.phase("total") or 0.0
        table.add_row(
            t.checkout,
            f"{t.example} {t.backend}",
            f"{t.wall:.2f}",
            f"{t.startup:.2f}",
            f"{t.wall - total:.2f}",
            *(_seconds(t.phase(name)) for name in ("setup", "port_load_wait", "l1", "l2", "l3")),
            _seconds(t.phase("l3_compile")),
            _seconds(t.phase("plain")),
            _seconds(t.phase("coverage")),
            f"{total:.2f}",
        )
    return table


def _ports(text: str) -> list[tuple[str, str]]:
    """`cartpole:numpy,cartpole:jax` as (example, backend) pairs."""
    pairs = [item.strip().split(":") for item in text.split(",") if item.strip()]
    if any(len(pair) != 2 for pair in pairs):
        raise SystemExit(f"--ports: expected EXAMPLE:BACKEND,..., got {text!r}")
    return [(example, backend) for example, backend in pairs]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=7, help="L3 repeats")
    parser.add_argument(
        "--command-repeats", type=int, default=3, help="whole-command runs per port (median)"
    )
    parser.add_argument(
        "--ports",
        default="cartpole:numpy,cartpole:jax",
        help="EXAMPLE:BACKEND,... whose whole `envport verify` is timed",
    )
    parser.add_argument(
        "--repo",
        action="append",
        default=[],
        type=Path,
        help="another checkout to time the same commands against (its .venv, else this "
        "Python with it on PYTHONPATH); repeatable",
    )
    parser.add_argument("--no-l3", action="store_true", help="skip the in-process L3 part")
    parser.add_argument(
        "--cold",
        action="store_true",
        help="every timed run with an empty cache home: a JAX port's first verify, compiling "
        "everything (by default the runs find what the warm-up run compiled)",
    )
    parser.add_argument("--json", type=Path, default=RESULTS, help="where the JSON goes")
    args = parser.parse_args()
    ports = _ports(args.ports)
    console = Console(width=200)
    results: dict = {}
    if not args.no_l3:
        options = L3Options(episodes=args.episodes, steps=args.steps, mode="both")
        rows = [measure(backend, options, args.repeats) for backend in ("numpy", "jax")]
        console.print(l3_table(rows, args.episodes, args.repeats))
        results["l3"] = rows
    checkouts = [Checkout(repo.resolve(), str(repo)) for repo in args.repo]
    checkouts.append(Checkout(ROOT, "this checkout"))
    timings = [
        timing
        for example, backend in ports
        for timing in time_command(checkouts, example, backend, args.command_repeats, args.cold)
    ]
    console.print(command_table(timings, args.command_repeats))
    results["verify"] = [timing.as_json() for timing in timings]
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
