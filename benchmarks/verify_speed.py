"""How long L3 takes next to the time the reference alone needs for the same transitions.

    python benchmarks/verify_speed.py [--episodes 100] [--steps 500]

For each known-good CartPole port: the reference alone replays exactly the transitions L3
compares (same reset seeds, same actions, no state reads), then `verify` runs L3 (both
modes). Prints a table and writes benchmarks/results/verify_speed.json. Fixed costs (worker
start-up and port import not hidden behind the reference, JAX compilation) are stated apart.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from envport.spec import load_spec
from envport.verifiers import l3
from envport.verifiers.reference import Reference
from envport.verifiers.verify import VerifyOptions, verify

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "cartpole"


def reference_alone(episodes: list[l3.ReferenceEpisode], reference: Reference) -> float:
    started = time.perf_counter()
    for episode in episodes:
        reference.reset(episode.plan.reset_seed)
        if episode.plan.late_start is not None:
            reference.env._elapsed_steps = episode.plan.late_start
        for action in episode.actions:
            reference.step(action)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--steps", type=int, default=500)
    args = parser.parse_args()
    spec = load_spec(EXAMPLE)
    reference = Reference(spec)
    options = l3.L3Options(episodes=args.episodes, steps=args.steps, mode="both")
    episodes = l3.play_reference(reference, spec, options)
    transitions = sum(len(e.actions) for e in episodes)
    alone = min(reference_alone(episodes, reference) for _ in range(3))

    rows = []
    for backend in ("numpy", "jax"):
        report = verify(
            str(EXAMPLE),
            str(EXAMPLE / "ports" / backend),
            VerifyOptions(levels=("l3",), episodes=args.episodes, steps=args.steps, mode="both"),
        )
        assert report.passed, report.text()
        total = report.seconds["total"]
        compile_s = sum(level.seconds.get("port_compile", 0.0) for level in report.levels)
        # Fixed costs, paid once per verify whatever the episode count: spec and env set-up,
        # worker start-up and port import not hidden behind the reference, JAX compilation.
        fixed = compile_s + report.seconds.get("port_load_wait", 0.0) + report.seconds["setup"]
        rows.append(
            {
                "backend": backend,
                "transitions": transitions,
                "reference_alone_s": alone,
                "l3_total_s": total,
                "jax_compile_s": compile_s,
                "worker_startup_s": report.seconds.get("port_load_wait", 0.0),
                "setup_s": report.seconds["setup"],
                "l3_without_fixed_s": total - fixed,
                "ratio_with_fixed": total / alone,
                "ratio_without_fixed": (total - fixed) / alone,
            }
        )

    table = Table(title=f"L3 ({args.episodes} episodes, {transitions} transitions, both modes)")
    for column in (
        "port",
        "reference alone",
        "L3 total",
        "compile",
        "start-up",
        "set-up",
        "L3 - fixed",
        "ratio",
        "ratio - fixed",
    ):
        table.add_column(column, justify="right")
    for r in rows:
        table.add_row(
            r["backend"],
            f"{r['reference_alone_s']:.3f} s",
            f"{r['l3_total_s']:.3f} s",
            f"{r['jax_compile_s']:.3f} s",
            f"{r['worker_startup_s']:.3f} s",
            f"{r['setup_s']:.3f} s",
            f"{r['l3_without_fixed_s']:.3f} s",
            f"{r['ratio_with_fixed']:.1f}",
            f"{r['ratio_without_fixed']:.2f}",
        )
    Console(width=160).print(table)
    out = ROOT / "benchmarks" / "results" / "verify_speed.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rows, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
