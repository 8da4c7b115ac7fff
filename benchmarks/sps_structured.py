"""Steps per second of the structured-state examples: Blackjack and MiniGrid, JAX port vs anchor.

    python benchmarks/sps_structured.py [--examples blackjack,minigrid_empty,minigrid_doorkey]
                                        [--batch-sizes 32,512,4096] [--steps 1000]
                                        [--repeats 3]

For each example, one `envport bench` run: the reference here (one env, and a SyncVectorEnv
of 32), the JAX port and the anchor (xminigrid's closest env for MiniGrid; Blackjack has no
JAX implementation on PyPI, so none) each in a worker, taking turns at every batch size.
Prints each table and the ratios at batch 4096 (port / single reference env, port / anchor),
and writes benchmarks/results/sps_structured.json. Ratios are reported, not asserted: the
machines this runs on are shared and noisy.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from envport.targets.bench.report import BenchReport, console, table
from envport.targets.bench.run import BenchOptions, run_bench

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
AT = 4096
# The anchor of each example: a published JAX implementation of the same env, or None.
ANCHORS: dict[str, str | None] = {
    "blackjack": None,
    "minigrid_empty": "xminigrid:MiniGrid-Empty-8x8",
    "minigrid_doorkey": "xminigrid:MiniGrid-DoorKey-5x5",
}


def ratios(report: BenchReport, anchor: str | None) -> dict[str, float | None]:
    port = report.find("jax port", AT)
    single = next(r for r in report.rows if r.kind == "reference" and r.batch == 1)
    other = report.find(anchor, AT) if anchor else None
    return {
        "port_sps": port.sps if port else None,
        "reference_sps": single.sps,
        "anchor_sps": other.sps if other else None,
        "port_over_reference": port.sps / single.sps if port else None,
        "port_over_anchor": port.sps / other.sps if port and other else None,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", default=",".join(ANCHORS))
    parser.add_argument("--batch-sizes", default="32,512,4096")
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    options = BenchOptions(
        batch_sizes=tuple(int(b) for b in args.batch_sizes.split(",")),
        steps=args.steps,
        repeats=args.repeats,
    )
    out = console()
    results = {}
    for name in args.examples.split(","):
        example = ROOT / "examples" / name
        anchor = ANCHORS[name]
        report = run_bench(str(example), str(example / "ports" / "jax"), options, "jax", anchor)
        out.print(table(report))
        found = ratios(report, anchor)
        shown = {k: "n/a" if v is None else f"{v:.3g}" for k, v in found.items()}
        out.print(
            f"{name} B={AT}: port / reference single env = {shown['port_over_reference']}, "
            f"port / {anchor or 'no anchor'} = {shown['port_over_anchor']}"
        )
        results[name] = {"anchor": anchor, "at": AT, **found, "report": report.model_dump()}
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / "sps_structured.json"
    if path.exists():  # a run of some examples keeps the others' last results
        results = json.loads(path.read_text(encoding="utf-8")) | results
    path.write_text(json.dumps(results, indent=2), encoding="utf-8")
    out.print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
