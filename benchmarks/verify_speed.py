"""How long L3 takes next to the time the reference alone needs for the same transitions.

    python benchmarks/verify_speed.py [--episodes 100] [--steps 500] [--repeats 7]

For each known-good CartPole port, in one process: the reference alone replays exactly the
transitions L3 compares (same reset seeds, same actions, no state reads, nothing kept), and
L3 (both modes, the same code `verify` runs) checks the port in a worker started once.
The two are timed alternately, `--repeats` times each, and the best of each is compared:
this machine is shared, and a process's speed swings by up to 2x from one second to the
next. The fixed costs one `verify` pays on top, whatever the episode count, are stated
apart: worker start-up and port import, and JAX compilation (the first L3 run's extra).
Prints a table and writes benchmarks/results/verify_speed.json.
"""

from __future__ import annotations

import argparse
import gc
import json
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from envport.serve.client import PortWorker
from envport.spec import load_spec
from envport.verifiers.levels.l3 import lanes as l3_lanes
from envport.verifiers.levels.l3 import rollout as l3
from envport.verifiers.levels.l3.played import Played
from envport.verifiers.options import L3Options
from envport.verifiers.reference import Reference
from envport.verifiers.verify import port_target

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "cartpole"


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
    target, modules, entry = port_target(spec, port, "auto")
    load = {"port_dir": str(port.resolve()), "modules": modules, "entry": entry, "target": target}
    started = time.perf_counter()
    with PortWorker(load=load) as worker:
        worker.receive()
        startup = time.perf_counter() - started

        def run() -> tuple[float, float]:
            began = time.perf_counter()
            levels = l3_lanes.run_l3(spec, options, "", worker, reference)
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    options = L3Options(episodes=args.episodes, steps=args.steps, mode="both")
    rows = [measure(backend, options, args.repeats) for backend in ("numpy", "jax")]

    table = Table(title=f"L3, {args.episodes} episodes, both modes: best of {args.repeats}")
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
    Console(width=160).print(table)
    out = ROOT / "benchmarks" / "results" / "verify_speed.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rows, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
