"""L3 throughput with 1 and 2 reference workers, and the round trip of one request.

    python benchmarks/rollout_scaling.py [--episodes 10000] [--port examples/cartpole/ports/numpy]

L3 alone (both modes) on CartPole; throughput is transitions compared per second of the
whole verify call. Prints a table and writes benchmarks/results/rollout_scaling.json.
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
from envport.verifiers.verify import VerifyOptions, verify

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "cartpole"


def ping_seconds(port: Path, count: int = 200) -> list[float]:
    load = {"port_dir": str(port), "modules": [], "entry": "env", "target": "auto"}
    with PortWorker(load=load) as worker:
        worker.receive()
        times = []
        for _ in range(count):
            started = time.perf_counter()
            worker.request("ping")
            times.append(time.perf_counter() - started)
    return times


def play_seconds(episodes: int, workers: int) -> float:
    """Reference play alone through the worker pool: the part workers parallelise."""
    from envport.verifiers import l3

    options = l3.L3Options(episodes=episodes, steps=500, mode="both")
    started = time.perf_counter()
    players = l3.ReferencePlayers(str(EXAMPLE / "envport.toml"), options, workers, 300.0)
    played = players.episodes()
    players.close()
    assert len(played) == episodes
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--episodes", type=int, default=10000)
    parser.add_argument("--port", type=Path, default=EXAMPLE / "ports" / "numpy")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    rows = []
    for workers in (1, 2):
        best = None
        for _ in range(args.repeats):
            options = VerifyOptions(levels=("l3",), episodes=args.episodes, workers=workers)
            report = verify(str(EXAMPLE), str(args.port), options)
            assert report.passed, report.text()
            total = report.seconds["total"]
            if best is None or total < best[0]:
                best = (total, report)
        assert best is not None
        total, report = best
        transitions = sum(level.steps_compared for level in report.levels)
        play = min(play_seconds(args.episodes, workers) for _ in range(args.repeats))
        rows.append(
            {
                "workers": workers,
                "reference_play_seconds": play,
                "episodes": args.episodes,
                "transitions_compared": transitions,
                "seconds": total,
                "throughput": transitions / total,
            }
        )
    base = rows[0]["throughput"]
    for row in rows:
        row["speedup"] = row["throughput"] / base
        row["play_speedup"] = rows[0]["reference_play_seconds"] / row["reference_play_seconds"]
    pings = ping_seconds(args.port)
    ping = {
        "median_ms": statistics.median(pings) * 1e3,
        "p99_ms": sorted(pings)[int(0.99 * len(pings)) - 1] * 1e3,
    }
    table = Table(title=f"L3 on CartPole, {args.episodes} episodes, both modes ({args.port.name})")
    columns = (
        "reference workers",
        "transitions",
        "L3 seconds",
        "L3 transitions/s",
        "L3 speed-up",
        "reference play s",
        "play speed-up",
    )
    for column in columns:
        table.add_column(column, justify="right")
    for row in rows:
        table.add_row(
            str(row["workers"]),
            str(row["transitions_compared"]),
            f"{row['seconds']:.2f}",
            f"{row['throughput']:,.0f}",
            f"{row['speedup']:.2f}x",
            f"{row['reference_play_seconds']:.2f}",
            f"{row['play_speedup']:.2f}x",
        )
    console = Console(width=120)
    console.print(table)
    console.print(
        f"ping round trip: median {ping['median_ms']:.3f} ms, p99 {ping['p99_ms']:.3f} ms"
    )
    out = ROOT / "benchmarks" / "results" / "rollout_scaling.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"rows": rows, "ping": ping}, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
