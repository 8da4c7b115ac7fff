"""Mutation self-check: plant known bugs in the known-good ports and count what is caught.

    python benchmarks/mutation_check.py [examples/cartpole] [--target jax ...] [--processes N]
        [--fail-fast] [--levels l1,l3] [--mutants 'numpy-worldgen-*'] [--json PATH]

Prints a table and writes benchmarks/results/mutants_<example>[_<target>...].json (CartPole's
whole check: benchmarks/results/mutants.json), so one example's check never replaces another's
record, or --json PATH (a check after editing a port need not replace the recorded results).
Exit 1 if any behaviour-changing mutant is missed, if an equivalent one is flagged, or if a
replay command does not reproduce.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from envport.errors import EnvportError
from envport.verifiers.options import DEFAULT_LEVELS, VerifyOptions
from envport.verifiers.selfcheck import level_table, run_selfcheck

ROOT = Path(__file__).resolve().parent.parent


def recorded(result: dict) -> dict:
    """A mutant's result as the record keeps it: its first divergence without the start
    state and the grid pictures (a chess position is 40 kB, its pictures 50 kB more), which
    the divergence's replay line reproduces whole."""
    first = result.get("first")
    if first is None:
        return result
    fields = [{k: v for k, v in f.items() if k != "picture"} for f in first.get("fields", [])]
    return {**result, "first": {**first, "start_state": None, "fields": fields}}


def record_path(example: Path, targets: tuple[str, ...] | None, only: str | None = None) -> Path:
    """The record of one example's check (and of its targets, and the ids picked, when
    some are named: a check of a few mutants never replaces the whole check's record)."""
    results = ROOT / "benchmarks" / "results"
    if example.name == "cartpole" and not targets and not only:
        return results / "mutants.json"  # the record README and the docs cite
    # A negated class keeps its sense in the name ('jax-[!w]*': jax-not-w, not jax-w).
    named = only.replace("[!", "not-") if only else None
    picked = [re.sub(r"[^A-Za-z0-9]+", "-", named).strip("-")] if named else []
    parts = ["mutants", example.name, *sorted(targets or ()), *picked]
    return results / ("_".join(parts) + ".json")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("example", nargs="?", type=Path, default=ROOT / "examples" / "cartpole")
    parser.add_argument(
        "--target",
        action="append",
        choices=("jax", "numpy", "rust"),
        help="only this target's mutants (repeatable; default every target)",
    )
    parser.add_argument("--processes", type=int, help="mutants verified at once (the cores)")
    parser.add_argument(
        "--fail-fast",
        action="store_true",
        help="each mutant stops at the first check that catches it (the levels after it are "
        "not run: a slow reference's self-check in minutes, its first catches only)",
    )
    parser.add_argument(
        "--levels",
        default=",".join(DEFAULT_LEVELS),
        help="the levels each mutant is verified at (default l1,l2,l3): an example whose "
        "L2 takes many minutes (Crafter's) checks its step's mutants at l1,l3 and its "
        "generator's at l2",
    )
    parser.add_argument(
        "--mutants",
        metavar="GLOB",
        help="only the mutants whose id matches (a world generator's at --levels l2: only "
        "l2.reset sees a reset, and L2's other checks of a generated world are minutes)",
    )
    parser.add_argument("--json", type=Path, help="where the results go (default: see above)")
    args = parser.parse_args()
    example: Path = args.example
    if not (example / "envport.toml").is_file():
        print(f"mutation_check: {example}: no envport.toml (name an example)", file=sys.stderr)
        return 2
    targets = tuple(args.target) if args.target else None
    levels = tuple(level.strip() for level in args.levels.split(",") if level.strip())
    try:
        options = VerifyOptions(levels=levels, shrink=False, fail_fast=args.fail_fast)
        results = run_selfcheck(
            example, options, targets=targets, processes=args.processes, only=args.mutants
        )
    except (EnvportError, ValueError) as error:
        print(f"mutation_check: {error}", file=sys.stderr)
        return 2
    table = Table(title=f"mutants of {example.name}")
    for column in ("mutant", "what", "levels catching", "first field", "replay", "ok"):
        table.add_column(column)
    for r in results:
        first = r.first.fields[0].field if r.first and r.first.fields else (r.error or "-")
        table.add_row(
            r.id,
            r.what if not r.equivalent else f"{r.what} (equivalent)",
            ", ".join(r.levels_catching) or "-",
            first,
            {True: "same", False: "DIFFERS", None: "-"}[r.replay_matches],
            "yes" if r.ok else "NO",
        )
    console = Console(width=200)
    console.print(table)
    counts = Table(
        title="behaviour-changing mutants per level"
        + (" (--fail-fast: first catches only)" if args.fail_fast else "")
    )
    for column in ("level", "catches", "first to catch"):
        counts.add_column(column, justify="right")
    for level, row in level_table(results).items():
        counts.add_row(level, str(row["catches"]), str(row["first"]))
    console.print(counts)
    missed = [r.id for r in results if not r.ok]
    console.print(f"not ok: {missed or 'none'}")
    out = args.json or record_path(example, targets, args.mutants)
    out.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "example": example.name,
        "targets": list(targets or ()),
        "mutants": [
            {**recorded(r.model_dump()), "levels_catching": r.levels_catching, "ok": r.ok}
            for r in results
        ],
        "levels": level_table(results),
        # With --fail-fast a mutant's levels after its first catch did not run.
        "fail_fast": args.fail_fast,
        "levels_run": list(levels),
    }
    out.write_text(json.dumps(payload, indent=2), encoding="utf-8")
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
