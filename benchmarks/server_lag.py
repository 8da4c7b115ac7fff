"""Event-loop lag of `envport serve` while 16 L3 jobs run against it at once.

    python benchmarks/server_lag.py [--jobs 16] [--episodes 100] [--workers 2]

Each job is one client sending a whole L3 check (free-running rollout and resync steps for
`--episodes` CartPole episodes) to a server hosting the NumPy port. Prints a table and
writes benchmarks/results/server_lag.json. The issue's goal: p99 under 50 ms.
"""

from __future__ import annotations

import argparse
import json
import signal
import socket
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from rich.console import Console
from rich.table import Table

from envport.serve.remote import EnvClient
from envport.spec import load_spec
from envport.verifiers.levels.l3 import rollout as l3
from envport.verifiers.options import L3Options
from envport.verifiers.reference import Reference

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "cartpole"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=16)
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    spec = load_spec(EXAMPLE)
    options = L3Options(episodes=args.episodes, steps=500, mode="both")
    played = l3.play_reference(Reference(spec), spec, options)
    free, resync = l3.free_request(played), l3.resync_request(played)

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        address = f"tcp://127.0.0.1:{probe.getsockname()[1]}"
    stats_file = Path(tempfile.mkdtemp()) / "stats.json"
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "envport",
            "serve",
            str(EXAMPLE),
            "--port",
            str(EXAMPLE / "ports" / "numpy"),
            "--address",
            address,
            "--workers",
            str(args.workers),
            "--stats",
            str(stats_file),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None and "serving" in server.stdout.readline()

    def job(_: int) -> float:
        started = time.perf_counter()
        with EnvClient(address, timeout=300) as client:
            client.receive()
            client.request("rollout", **free)
            client.request("step_batch", **resync)
        return time.perf_counter() - started

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        durations = list(pool.map(job, range(args.jobs)))
    wall = time.perf_counter() - started
    server.send_signal(signal.SIGTERM)
    server.communicate(timeout=120)
    stats = json.loads(stats_file.read_text())
    lag = stats["lag"]

    table = Table(
        title=f"{args.jobs} concurrent L3 jobs on `envport serve` ({args.workers} workers)"
    )
    for column in ("jobs", "wall s", "slowest job s", "lag p50 ms", "p90", "p99", "max"):
        table.add_column(column, justify="right")
    table.add_row(
        str(args.jobs),
        f"{wall:.2f}",
        f"{max(durations):.2f}",
        f"{lag['p50_ms']:.2f}",
        f"{lag['p90_ms']:.2f}",
        f"{lag['p99_ms']:.2f}",
        f"{lag['max_ms']:.2f}",
    )
    Console(width=120).print(table)
    out = ROOT / "benchmarks" / "results" / "server_lag.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    result = {"jobs": args.jobs, "wall_s": wall, "job_s": durations, **stats}
    out.write_text(json.dumps(result, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
