"""L3 over local lanes and over a local Ray, in one run: Ray's overhead, and the figures a
plan for 10 and 100 nodes needs.

    python benchmarks/ray_scaling.py [--episodes 10000] [--repeats 2] [--workers 2]

Both set-ups run `envport verify --levels l3` as a user would (`verify()`, L3 both modes,
the known-good NumPy CartPole port), `--workers` lanes locally, and on Ray chunks cut for
the same lane count, on a local Ray of this machine's cores. Timed alternately, `--repeats`
times each; the first Ray run includes starting its worker processes and loading the port
in each (cold), later ones reuse them (warm). Also measured on the same Ray:
- a no-op task's round trip (Ray's own cost per task);
- one chunk at a time (nothing else in flight): the driver's wall time per chunk against
  the task body's own time, i.e. what a chunk costs beyond its work (scheduling, shipping
  the job and the judged result).
Prints a table and writes benchmarks/results/ray_scaling.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

import ray
from rich.console import Console
from rich.table import Table

from envport.spec import load_spec
from envport.targets.registry import load_request
from envport.verifiers.levels.l3 import on_ray as l3_ray
from envport.verifiers.options import L3Options
from envport.verifiers.reporting.replay import replays
from envport.verifiers.verify import VerifyOptions, verify

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "cartpole"
PORT = EXAMPLE / "ports" / "numpy"
RESULTS = ROOT / "benchmarks" / "results" / "ray_scaling.json"


def timed_verify(episodes: int, workers: int, executor: str) -> dict[str, float]:
    options = VerifyOptions(levels=("l3",), episodes=episodes, workers=workers, executor=executor)
    cpu = time.process_time()
    report = verify(str(EXAMPLE), str(PORT), options)
    assert report.passed, report.error or report.text()
    return {
        "l3_s": report.seconds["l3"],
        "total_s": report.seconds["total"],
        "transitions": float(sum(level.steps_compared for level in report.levels)),
        # This process's CPU over the whole verify: on Ray, the driver's share of the work.
        "driver_cpu_s": time.process_time() - cpu,
    }


def driver_cost(episodes: int, lanes: int) -> dict[str, float]:
    """Many small chunks (sized for `lanes` lanes) on Ray: the driver's CPU per chunk, what
    limits how many chunks a second one driver can take in."""
    options = L3Options(episodes=episodes, steps=500, mode="both")
    chunks = len(l3_ray.plan_chunks(options, lanes)[1])
    run = timed_verify(episodes, lanes, "ray")
    return {
        "small_chunks": float(chunks),
        "small_chunk_episodes": episodes / chunks,
        "small_chunks_l3_s": run["l3_s"],
        "small_chunks_throughput": run["transitions"] / run["l3_s"],
        "driver_cpu_per_chunk_s": run["driver_cpu_s"] / chunks,
    }


def noop_round_trip(count: int = 300) -> float:
    noop = ray.remote(lambda: None).options(num_cpus=l3_ray.TASK_CPUS)
    ray.get(noop.remote())
    started = time.perf_counter()
    for _ in range(count):
        ray.get(noop.remote())
    return (time.perf_counter() - started) / count


def _timed_chunk(job: l3_ray.ChunkJob, indices: list[int]) -> tuple[float, int]:
    started = time.perf_counter()
    answer = l3_ray.check_chunk(job, indices)
    assert "results" in answer, answer
    return time.perf_counter() - started, len(indices)


def chunk_overhead(episodes: int, workers: int, count: int = 8) -> dict[str, float]:
    """Chunks one at a time: driver wall per chunk minus the task body's time."""
    spec = load_spec(EXAMPLE)
    options = L3Options(episodes=episodes, steps=500, mode="both")
    replay = replays(str(EXAMPLE), str(PORT), VerifyOptions(), episodes, 500, True)["l3"]
    size, chunks = l3_ray.plan_chunks(options, workers)
    job = ray.put(
        l3_ray.ChunkJob(
            str(EXAMPLE / "envport.toml"), load_request(spec, PORT), options, replay, size, 120.0
        )
    )
    task = ray.remote(_timed_chunk).options(num_cpus=l3_ray.TASK_CPUS)
    ray.get(task.remote(job, chunks[-1]))  # a worker with the port loaded
    walls, bodies, sizes = [], [], []
    for chunk in chunks[:count]:
        started = time.perf_counter()
        body, size_done = ray.get(task.remote(job, chunk))
        walls.append(time.perf_counter() - started)
        bodies.append(body)
        sizes.append(size_done)
    overheads = [w - b for w, b in zip(walls, bodies, strict=True)]
    return {
        "chunk_episodes": float(statistics.median(sizes)),
        "chunks_planned": float(len(chunks)),
        "chunk_body_s": statistics.median(bodies),
        "chunk_wall_s": statistics.median(walls),
        "overhead_per_chunk_s": statistics.median(overheads),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--episodes", type=int, default=10000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    ray.init(include_dashboard=False, log_to_driver=False)
    cpus = int(ray.cluster_resources().get("CPU", 1))
    runs: dict[str, list[dict[str, float]]] = {"local": [], "ray": []}
    for _ in range(args.repeats):
        for executor in ("local", "ray"):
            runs[executor].append(timed_verify(args.episodes, args.workers, executor))
    noop = noop_round_trip()
    chunks = chunk_overhead(args.episodes, args.workers)
    small = driver_cost(args.episodes, 60)
    ray.shutdown()
    transitions = runs["local"][0]["transitions"]
    local_best = min(r["l3_s"] for r in runs["local"])
    ray_cold = runs["ray"][0]["l3_s"]
    ray_warm = min(r["l3_s"] for r in runs["ray"][1:]) if args.repeats > 1 else ray_cold
    result: dict[str, Any] = {
        "episodes": args.episodes,
        "workers": args.workers,
        "ray_cpus": cpus,
        "transitions_compared": transitions,
        "runs": runs,
        "local_l3_best_s": local_best,
        "ray_l3_cold_s": ray_cold,
        "ray_l3_warm_best_s": ray_warm,
        "ray_over_local_warm": ray_warm / local_best,
        "ray_over_local_cold": ray_cold / local_best,
        "local_throughput": transitions / local_best,
        "ray_node_throughput_warm": transitions / ray_warm,
        "noop_task_round_trip_s": noop,
        **chunks,
        **small,
        "ray_driver_cpu_s": min(r["driver_cpu_s"] for r in runs["ray"]),
    }
    table = Table(title=f"L3 on CartPole, {args.episodes} episodes, both modes, numpy port")
    for column in ("set-up", "L3 s", "transitions/s", "vs local lanes"):
        table.add_column(column, justify="right" if column != "set-up" else "left")
    table.add_row(
        f"local, {args.workers} lanes (best)",
        f"{local_best:.2f}",
        f"{transitions / local_best:,.0f}",
        "1.00",
    )
    table.add_row(
        f"Ray, {cpus} CPUs, cold",
        f"{ray_cold:.2f}",
        f"{transitions / ray_cold:,.0f}",
        f"{ray_cold / local_best:.2f}",
    )
    table.add_row(
        f"Ray, {cpus} CPUs, warm (best)",
        f"{ray_warm:.2f}",
        f"{transitions / ray_warm:,.0f}",
        f"{ray_warm / local_best:.2f}",
    )
    console = Console()
    console.print(table)
    console.print(
        f"no-op task round trip {noop * 1e3:.2f} ms; a chunk of {chunks['chunk_episodes']:.0f} "
        f"episodes: body {chunks['chunk_body_s']:.3f} s, wall {chunks['chunk_wall_s']:.3f} s, "
        f"overhead {chunks['overhead_per_chunk_s'] * 1e3:.1f} ms"
    )
    console.print(
        f"{small['small_chunks']:.0f} chunks of ~{small['small_chunk_episodes']:.0f} episodes: "
        f"L3 {small['small_chunks_l3_s']:.2f} s, driver CPU per chunk "
        f"{small['driver_cpu_per_chunk_s'] * 1e3:.2f} ms"
    )
    RESULTS.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    console.print(f"wrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
