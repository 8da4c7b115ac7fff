"""L3 throughput with 1 and 2 workers (lanes), and the round trip of one request.

    python benchmarks/rollout_scaling.py [--episodes 10000] [--repeats 5]
        [--port examples/cartpole/ports/numpy]

L3 (both modes) on CartPole, run by the code `verify` runs (`l3_lanes.run_l3`). A lane is a
reference player and a port worker; lane 1 plays in this process, lane 2 has a reference
worker and a port worker of its own. All workers are started and loaded first, as they are
in a `verify` by the time L3 runs (they load while L1 and L2 run), so the figures are L3's
own. The two set-ups are timed alternately, `--repeats` times each, and the best of each is
compared: this machine is shared and its speed swings from one second to the next. Also
shown: the best whole `verify --levels l3` call (workers started cold, their start-up
inside it). Throughput is transitions compared per second. Prints a table and writes
benchmarks/results/rollout_scaling.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from envport.serve.client import PortWorker
from envport.spec import load_spec
from envport.verifiers.levels.l3 import lanes as l3_lanes
from envport.verifiers.options import L3Options
from envport.verifiers.reference import Reference
from envport.verifiers.verify import VerifyOptions, port_target, verify

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "cartpole"


def ping_seconds(worker: PortWorker, count: int = 200) -> list[float]:
    times = []
    for _ in range(count):
        started = time.perf_counter()
        worker.request("ping")
        times.append(time.perf_counter() - started)
    return times


def l3_seconds(port: Path, episodes: int, repeats: int) -> tuple[dict[int, list[float]], int, list]:
    """Best-of timings of L3 with 1 and 2 lanes, workers loaded beforehand."""
    spec = load_spec(EXAMPLE)
    reference = Reference(spec)
    options = L3Options(episodes=episodes, steps=500, mode="both")
    target, modules, entry = port_target(spec, port, "auto")
    load = {"port_dir": str(port.resolve()), "modules": modules, "entry": entry, "target": target}
    spec_file = str((EXAMPLE / "envport.toml").resolve())
    times: dict[int, list[float]] = {1: [], 2: []}
    with PortWorker(load=load) as worker:
        worker.receive()
        lanes = l3_lanes.LaneWorkers(spec_file, 2, 300.0, lambda: PortWorker(load=load))
        try:
            lanes.wait_loaded(0)
            transitions = 0
            for _ in range(repeats):
                for count in (1, 2):
                    started = time.perf_counter()
                    levels = l3_lanes.run_l3(
                        spec, options, "", worker, reference, lanes if count == 2 else None
                    )
                    times[count].append(time.perf_counter() - started)
                    assert all(level.passed for level in levels)
                    transitions = sum(level.steps_compared for level in levels)
            pings = ping_seconds(worker)
        finally:
            lanes.close()
    return times, transitions, pings


def cold_verify_seconds(port: Path, episodes: int, workers: int, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        options = VerifyOptions(levels=("l3",), episodes=episodes, workers=workers)
        report = verify(str(EXAMPLE), str(port), options)
        assert report.passed, report.text()
        best = min(best, report.seconds["total"])
    return best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--episodes", type=int, default=10000)
    parser.add_argument("--port", type=Path, default=EXAMPLE / "ports" / "numpy")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    times, transitions, pings = l3_seconds(args.port, args.episodes, args.repeats)
    cold = {n: cold_verify_seconds(args.port, args.episodes, n, 2) for n in (1, 2)}
    rows = []
    for count in (1, 2):
        best = min(times[count])
        rows.append(
            {
                "workers": count,
                "episodes": args.episodes,
                "transitions_compared": transitions,
                "l3_seconds_best": best,
                "l3_seconds_median": statistics.median(times[count]),
                "l3_seconds_all": times[count],
                "throughput": transitions / best,
                "cold_verify_seconds": cold[count],
            }
        )
    for row in rows:
        row["speedup"] = row["throughput"] / rows[0]["throughput"]
        row["median_speedup"] = rows[0]["l3_seconds_median"] / row["l3_seconds_median"]
        row["cold_speedup"] = rows[0]["cold_verify_seconds"] / row["cold_verify_seconds"]
    ping = {
        "median_ms": statistics.median(pings) * 1e3,
        "p99_ms": sorted(pings)[int(0.99 * len(pings)) - 1] * 1e3,
    }
    title = f"L3 on CartPole, {args.episodes} episodes, both modes ({args.port.name} port)"
    table = Table(title=title)
    columns = ("workers", "transitions", "L3 best", "L3 transitions/s", "speed-up (target 1.7)")
    columns += ("L3 median", "median speed-up", "cold verify", "cold speed-up")
    for column in columns:
        table.add_column(column, justify="right")
    for row in rows:
        table.add_row(
            str(row["workers"]),
            str(row["transitions_compared"]),
            f"{row['l3_seconds_best']:.2f} s",
            f"{row['throughput']:,.0f}",
            f"{row['speedup']:.2f}x",
            f"{row['l3_seconds_median']:.2f} s",
            f"{row['median_speedup']:.2f}x",
            f"{row['cold_verify_seconds']:.2f} s",
            f"{row['cold_speedup']:.2f}x",
        )
    console = Console(width=140)
    console.print(table)
    console.print(
        f"ping round trip: median {ping['median_ms']:.3f} ms, p99 {ping['p99_ms']:.3f} ms"
    )
    out = ROOT / "benchmarks" / "results" / "rollout_scaling.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"rows": rows, "ping": ping}, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
