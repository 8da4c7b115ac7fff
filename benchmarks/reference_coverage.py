"""Branch coverage of each example's reference by `envport verify`, without and with l3.explore.

    python benchmarks/reference_coverage.py [examples/minatar_breakout ...] [--seed 0]

Runs `envport verify EXAMPLE --port EXAMPLE/ports/<numpy, else the first port>` twice, as a
user would (a subprocess each): with `--explore-steps 0` (the levels alone: L1, L2, L3) and
with the spec's own exploration budget. Prints, per example, the branch exits of the
reference's functions the run entered and how many each run took, what is out of scope, what
stayed missed, the verdict and the wall time, and writes
benchmarks/results/reference_coverage.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "reference_coverage.json"


def port_of(example: Path) -> Path | None:
    ports = example / "ports"
    if (ports / "numpy").is_dir():
        return ports / "numpy"
    found = sorted(p for p in ports.iterdir() if p.is_dir()) if ports.is_dir() else []
    return found[0] if found else None


def measure(example: Path, port: Path, seed: int, explore: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch) / "report.json"
        command = [sys.executable, "-m", "envport", "verify", str(example), "--port", str(port)]
        command += ["--seed", str(seed), "--json", str(report)]
        if not explore:
            command += ["--explore-steps", "0"]
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, env=dict(os.environ))
        seconds = time.perf_counter() - started
        if not report.is_file():
            return {
                "error": (done.stderr or done.stdout).strip().splitlines()[-1:],
                "seconds": seconds,
            }
        data = json.loads(report.read_text())
    coverage = data.get("coverage") or {}
    verdict = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    return {
        "total": coverage.get("total", 0),
        "covered": coverage.get("covered", 0),
        "levels": coverage.get("levels", {}),
        "missed": [
            f"{b['file']}:{b['line']} {b['source']} {b['never']}"
            for b in coverage.get("missed", [])
        ],
        "out_of_scope": len(coverage.get("excluded", [])),
        "verdict": verdict.split(";")[0],
        "seconds": round(seconds, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("examples", nargs="*", type=Path)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    examples = args.examples or sorted(p.parent for p in (ROOT / "examples").glob("*/envport.toml"))
    rows: dict[str, Any] = {}
    console = Console()
    for example in examples:
        port = port_of(example)
        if port is None:
            continue
        console.print(f"[dim]{example.name} ({port.name})...[/dim]")
        rows[example.name] = {
            "port": port.name,
            "levels_only": measure(example, port, args.seed, explore=False),
            "with_explore": measure(example, port, args.seed, explore=True),
        }
    table = Table(title="Branch coverage of the reference by envport verify")
    for column in (
        "example",
        "port",
        "branch exits",
        "L1-L3",
        "with explore",
        "out of scope",
        "still missed",
        "verdict",
        "wall s (L1-L3 / explore)",
    ):
        table.add_column(column)
    for name, row in rows.items():
        before, after = row["levels_only"], row["with_explore"]
        if "error" in before or "error" in after:
            table.add_row(
                name, row["port"], "error", str(before.get("error") or after.get("error"))
            )
            continue
        table.add_row(
            name,
            row["port"],
            str(after["total"]),
            f"{before['covered']} ({100 * before['covered'] / max(before['total'], 1):.0f}%)",
            f"{after['covered']} ({100 * after['covered'] / max(after['total'], 1):.0f}%)",
            str(after["out_of_scope"]),
            str(len(after["missed"])),
            after["verdict"],
            f"{before['seconds']} / {after['seconds']}",
        )
    console.print(table)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    # A run on some examples updates their rows and keeps the others'.
    kept = json.loads(RESULTS.read_text()) if args.examples and RESULTS.is_file() else {}
    RESULTS.write_text(json.dumps({**kept, **rows}, indent=2, sort_keys=True) + "\n")
    console.print(f"wrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
