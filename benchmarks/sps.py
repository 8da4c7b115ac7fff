"""Steps per second of CartPole: the reference, every known-good port and gymnax, side by side.

    python benchmarks/sps.py [--batch-sizes 32,128,512,2048,4096,8192] [--steps 1000]
                             [--repeats 3] [--check]

The reference runs here (one Gymnasium env, and a SyncVectorEnv of 32); the NumPy, JAX and
Rust ports and gymnax's CartPole-v1 each run in a worker, taking turns at every batch size.
Prints a table and the acceptance ratios at batch 4096, and writes
benchmarks/results/sps.json and sps.png. Ratios are reported, not asserted (`--check` makes
a short one exit 1): the machines this runs on are shared and noisy.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from envport.spec import load_spec
from envport.targets.bench.report import BenchReport, console, plot, table
from envport.targets.bench.run import (
    BenchOptions,
    anchor_subject,
    new_report,
    port_subject,
    reference_rows,
    worker_rows,
)

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "cartpole"
RESULTS = ROOT / "benchmarks" / "results"
ANCHOR = "gymnax:CartPole-v1"
AT = 4096
# (what, numerator, denominator, at least): the speed acceptance of the Rust/bench issue.
CHECKS = [
    ("JAX port / gymnax CartPole-v1", "jax port", ANCHOR, 1.0),
    ("JAX port / Gymnasium single env", "jax port", "gymnasium", 100.0),
    ("Rust port / NumPy port", "rust port", "numpy port", 2.0),
]


def acceptance(report: BenchReport) -> list[dict]:
    results = []
    for what, top, bottom, least in CHECKS:
        numerator = report.find(top, AT)
        # The single reference env has one batch size: its own.
        denominator = report.find(bottom, 1 if bottom == "gymnasium" else AT)
        if numerator is None or denominator is None:
            results.append({"check": what, "ratio": None, "at_least": least, "ok": None})
            continue
        ratio = numerator.sps / denominator.sps
        results.append({"check": what, "ratio": ratio, "at_least": least, "ok": ratio >= least})
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-sizes", default="32,128,512,2048,4096,8192")
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--check", action="store_true", help="exit 1 if a ratio is short")
    args = parser.parse_args()
    options = BenchOptions(
        batch_sizes=tuple(int(b) for b in args.batch_sizes.split(",")),
        steps=args.steps,
        repeats=args.repeats,
    )
    spec = load_spec(EXAMPLE)
    ports = [
        port_subject(spec, str(EXAMPLE / "ports" / name), name) for name in ("numpy", "jax", "rust")
    ]
    report = new_report(str(EXAMPLE), options)
    report.rows += reference_rows(spec, options)
    report.rows += worker_rows(spec, [*ports, anchor_subject(spec, ANCHOR)], options)

    out = console()
    out.print(table(report))
    checks = acceptance(report)
    for check in checks:
        shown = "n/a" if check["ratio"] is None else f"{check['ratio']:.2f}"
        verdict = {True: "ok", False: "SHORT", None: f"not measured at B={AT}"}[check["ok"]]
        least = check["at_least"]
        out.print(f"B={AT}: {check['check']} = {shown} (at least {least:g}) {verdict}")
    RESULTS.mkdir(parents=True, exist_ok=True)
    data = report.model_dump() | {"acceptance": checks}
    (RESULTS / "sps.json").write_text(json.dumps(data, indent=2), encoding="utf-8")
    plot(report, RESULTS / "sps.png")
    out.print(f"wrote {RESULTS / 'sps.json'} and {RESULTS / 'sps.png'}")
    short = [c for c in checks if c["ok"] is False]
    return 1 if args.check and short else 0


if __name__ == "__main__":
    raise SystemExit(main())
