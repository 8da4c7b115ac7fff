"""Steps per second of every example's JAX port against its anchor, one bench run per example.

    python benchmarks/sps_jax.py [--examples cartpole,minigrid_empty,...]
                                 [--batch-sizes 32,512,4096] [--steps 1000] [--repeats 3]
                                 [--timeout 600] [--verdicts]

For each example, one `envport bench` run: the reference here (one env, and a SyncVectorEnv
of 32 where the reference is a Gymnasium env), the JAX port and its anchors (the published
JAX implementations of the same env: gymnax, xminigrid for MiniGrid, pgx and gymnax for
MinAtar, JaxMARL for MPE and Craftax-Classic for Crafter through the example's bridge
port; none where PyPI has none) each in a worker, taking turns at every batch size, so the
port / fastest anchor ratio of a row is measured in one run. Prints each table, then the
speed table of docs/commands.md ("envport bench") as Markdown, and writes
benchmarks/results/sps_jax.json (a run of some examples keeps the others' last results,
and the tables show every example's last run), then README's MinAtar, two-player, MPE and
Crafter tables: every batch size, one column per anchor kind (a bridge's column named by its
directory). With --verdicts, each bridge anchor (JaxMARL's MPE, Craftax-Classic) is also
verified as a user would (`envport verify ... --port <bridge>`) and its verdict printed and
kept beside its speed: `python benchmarks/sps_jax.py --examples crafter --verdicts` gives
Craftax-Classic's verdict and speed table in one command. An example whose bench fails is
reported and skipped. Ratios are reported, not asserted: the machines this runs on are
shared and noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from envport.errors import EnvportError
from envport.targets.bench.report import BenchReport, console, human, ratio, table
from envport.targets.bench.run import BenchOptions, run_bench

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
AT = 4096
# Every example with a JAX port, and its anchors: published JAX implementations of the same
# env, none where there is none on PyPI (Blackjack, Taxi; gymnax's FrozenLake-misc is a
# different env).
ANCHORS: dict[str, tuple[str, ...]] = {
    "cartpole": ("gymnax:CartPole-v1",),
    "acrobot": ("gymnax:Acrobot-v1",),
    "mountaincar": ("gymnax:MountainCar-v0",),
    "pendulum": ("gymnax:Pendulum-v1",),
    "minatar_asterix": ("pgx:minatar-asterix", "gymnax:Asterix-MinAtar"),
    "minatar_breakout": ("pgx:minatar-breakout", "gymnax:Breakout-MinAtar"),
    "minatar_freeway": ("pgx:minatar-freeway", "gymnax:Freeway-MinAtar"),
    "minatar_space_invaders": ("pgx:minatar-space_invaders", "gymnax:SpaceInvaders-MinAtar"),
    # gymnax has no Seaquest.
    "minatar_seaquest": ("pgx:minatar-seaquest",),
    "blackjack": (),
    "frozenlake": (),
    "taxi": (),
    "minigrid_empty": ("xminigrid:MiniGrid-Empty-8x8",),
    "minigrid_doorkey": ("xminigrid:MiniGrid-DoorKey-5x5",),
    "connect_four": ("pgx:connect_four",),
    "chess": ("pgx:chess",),
    "leduc_holdem": ("pgx:leduc_holdem",),
    # pgx has no Texas hold'em (nor has gymnax): its row's anchor columns read "-".
    "texas_holdem": (),
    # JaxMARL has no anchor class: its bridge port (the one `envport verify` judges) is timed.
    "mpe_simple_spread": ("bridge:examples/mpe_simple_spread/ports/jaxmarl",),
    "mpe_simple_tag": ("bridge:examples/mpe_simple_tag/ports/jaxmarl",),
    # Craftax-Classic (Crafter in JAX by its authors), timed through the bridge that verifies it.
    "crafter": ("bridge:examples/crafter/ports/craftax",),
}
# A bridge anchor is a port `envport verify` judges: with --verdicts each bridge's verdict
# (these options to verify) is printed and kept beside its speed, so one command gives both.
VERIFY_BRIDGE: dict[str, tuple[str, ...]] = {
    "bridge:examples/mpe_simple_spread/ports/jaxmarl": (),
    "bridge:examples/mpe_simple_tag/ports/jaxmarl": (),
    # Its L2 asks minutes of Crafter's worlds; its cases name what no drawn state shows.
    "bridge:examples/crafter/ports/craftax": (
        "--levels", "l1,l3", "--cases", "examples/crafter/cases/craftax",
    ),
}  # fmt: skip
# The two-player games: README's table of them, every batch size beside pgx.
GAMES = ("connect_four", "chess", "leduc_holdem", "texas_holdem")
# Agents moving at once: README's MPE table beside JaxMARL.
PARALLEL = ("mpe_simple_spread", "mpe_simple_tag")


def column(anchor: str) -> str:
    """An anchor's column: its kind (`pgx`), or a bridge's directory (`jaxmarl`)."""
    kind, _, rest = anchor.partition(":")
    return Path(rest).name if kind == "bridge" else kind


def ratios(report: BenchReport, anchors: tuple[str, ...]) -> dict[str, float | str | None]:
    """The port against the reference's one env and against the fastest anchor at B=AT."""
    port = report.find("jax port", AT)
    single = next(r for r in report.rows if r.kind == "reference" and r.batch == 1)
    timed = [row for name in anchors if (row := report.find(name, AT)) is not None]
    other = max(timed, key=lambda row: row.sps, default=None)
    return {
        "anchor": other.name if other else None,
        "port_sps": port.sps if port else None,
        "reference_sps": single.sps,
        "anchor_sps": other.sps if other else None,
        "port_over_reference": port.sps / single.sps if port else None,
        "port_over_anchor": port.sps / other.sps if port and other else None,
    }


SPEEDS = ("reference_sps", "port_sps", "anchor_sps")
RATIOS = ("port_over_reference", "port_over_anchor")


def markdown(results: dict[str, dict]) -> str:
    """The speed table of docs/commands.md, one row per example benched."""
    lines = [
        "| example | reference, 1 env | JAX port | fastest anchor | port / reference | "
        "port / anchor |",
        "|---|---|---|---|---|---|",
    ]
    for name, found in results.items():
        speeds = {k: "-" if found[k] is None else human(found[k]) for k in SPEEDS}
        ratios = {k: "-" if found[k] is None else ratio(found[k]) for k in RATIOS}
        anchor = f"`{found['anchor']}`, {speeds['anchor_sps']}" if found["anchor"] else "none"
        lines.append(
            f"| {name} | {speeds['reference_sps']} | {speeds['port_sps']} | {anchor} | "
            f"{ratios['port_over_reference']} | {ratios['port_over_anchor']} |"
        )
    return "\n".join(lines)


def by_batch(results: dict[str, dict], names: list[str]) -> str:
    """README's tables for the MinAtar games and the two-player games: every batch size,
    one column per anchor kind (pgx, gymnax), the port over each."""
    chosen = {n: r for n, r in results.items() if n in names}
    kinds = sorted({column(a) for r in chosen.values() for a in r["anchors"]})
    head = ["example", "B", "reference, 1 env", "JAX port", *kinds, "port / reference"]
    lines = ["| " + " | ".join(head + [f"port / {k}" for k in kinds]) + " |"]
    lines.append("|" + "---|" * (len(head) + len(kinds)))
    for name, found in chosen.items():
        report = BenchReport.model_validate(found["report"])
        single = next(r for r in report.rows if r.kind == "reference" and r.batch == 1)
        for batch in report.batch_sizes:
            port = report.find("jax port", batch)
            if port is None:
                continue
            found_rows = {column(a): report.find(a, batch) for a in found["anchors"]}
            by_kind = {k: row.sps for k, row in found_rows.items() if row is not None}
            speeds = [human(by_kind[k]) if k in by_kind else "-" for k in kinds]
            over = [ratio(port.sps / by_kind[k]) if k in by_kind else "-" for k in kinds]
            cells = [name, str(batch), human(single.sps), human(port.sps), *speeds]
            lines.append("| " + " | ".join([*cells, ratio(port.sps / single.sps), *over]) + " |")
    return "\n".join(lines)


def verdict(example: Path, anchor: str, timeout: float) -> dict:
    """`envport verify` of a bridge anchor, run as a user runs it: its verdict, and each
    failing check with its first difference (`l1.transition: state.zombies.length:
    expected 9, got 0`)."""
    bridge = anchor.partition(":")[2]
    with tempfile.TemporaryDirectory() as scratch:
        report_path = Path(scratch) / "report.json"
        words = ["verify", str(example.relative_to(ROOT)), "--port", bridge, "--target", "jax"]
        words += [*VERIFY_BRIDGE[anchor], "--json", str(report_path)]
        done = subprocess.run(
            [sys.executable, "-m", "envport", *words],
            capture_output=True, text=True, timeout=timeout * 6, cwd=ROOT,
        )  # fmt: skip
        if not report_path.exists():
            lines = (done.stderr or done.stdout).strip().splitlines()
            return {"command": "envport " + " ".join(words[:-2]), "error": lines[-1:]}
        report = json.loads(report_path.read_text(encoding="utf-8"))
    return {
        "command": "envport " + " ".join(words[:-2]),
        "passed": report["passed"],
        "failing": failing_checks(report),
        "gaps": [f"{g['check']}: {g['detail']}" for g in report.get("gaps", [])],
    }


def failing_checks(report: dict) -> list[str]:
    """Each failing check of a verify report with every difference it names once (the
    proposed cases are a divergence each), as `check: field: expected e, got a`."""
    failing = []
    for level in report["levels"]:
        if level["passed"]:
            continue
        name = f"{level['level']}.{level['mode']}" if level.get("mode") else level["level"]
        shown = [_difference(d) for d in level.get("divergences") or [{}]]
        failing += [f"{name}: {what}" if what else name for what in dict.fromkeys(shown)]
    return failing


def _difference(divergence: dict) -> str:
    """A divergence's first differing field, or the first clause of its message."""
    if divergence.get("fields"):
        shown = divergence["fields"][0]
        return f"{shown['field']}: expected {shown['expected']}, got {shown['actual']}"
    message = divergence.get("message", "")
    return message.split(" (", 1)[0] if len(message) > 120 else message


def verdict_line(found: dict) -> str:
    if "error" in found:
        return f"no verdict: {' '.join(found['error'])}"
    if found["passed"]:
        gaps = f" with gaps ({'; '.join(found['gaps'])})" if found["gaps"] else ""
        return f"verified{gaps}"
    return "DIVERGED: " + "; ".join(found["failing"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", default=",".join(ANCHORS))
    parser.add_argument("--batch-sizes", default="32,512,4096")
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--timeout",
        type=float,
        default=600.0,
        help="seconds a worker may take for one timed run (pgx's chess at B=4096: minutes)",
    )
    parser.add_argument(
        "--verdicts",
        action="store_true",
        help="also verify each bridge anchor (JaxMARL's MPE, Craftax-Classic) as a user does "
        "and print its verdict beside its speed",
    )
    args = parser.parse_args()
    # Bridge anchors are named by their directory from the repository's root.
    os.chdir(ROOT)
    names = [name.strip() for name in args.examples.split(",") if name.strip()]
    unknown = [name for name in names if name not in ANCHORS]
    if unknown:
        parser.error(f"no JAX port known for {', '.join(unknown)}; known: {', '.join(ANCHORS)}")
    options = BenchOptions(
        batch_sizes=tuple(int(b) for b in args.batch_sizes.split(",")),
        steps=args.steps,
        repeats=args.repeats,
        timeout=args.timeout,
    )
    out = console()
    results: dict[str, dict] = {}
    failed = []
    for name in names:
        example = ROOT / "examples" / name
        anchors = ANCHORS[name]
        try:
            report = run_bench(
                str(example), str(example / "ports" / "jax"), options, "jax", anchors
            )
        except EnvportError as error:
            out.print(f"{name}: bench failed: {error}")
            failed.append(name)
            continue
        out.print(table(report))
        results[name] = {"anchors": list(anchors), "at": AT, **ratios(report, anchors)}
        results[name]["report"] = report.model_dump()
        if args.verdicts:
            judged = {a: verdict(example, a, args.timeout) for a in anchors if a in VERIFY_BRIDGE}
            for anchor, found in judged.items():
                out.print(f"{column(anchor)}'s verdict ({found['command']}):", markup=False)
                out.print("  " + verdict_line(found), markup=False)
            results[name]["verdicts"] = judged
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / "sps_jax.json"
    if path.exists():  # a run of some examples keeps the others' last results
        results = json.loads(path.read_text(encoding="utf-8")) | results
    # The tables hold every example's last run (each row still from one run of its own).
    out.print(f"\nAt B={AT}:\n")
    out.print(markdown(results), markup=False)
    # By name: Seaquest has one anchor (gymnax has no Seaquest) and is MinAtar all the same.
    minatar = [n for n in results if n.startswith("minatar_")]
    games = [n for n in results if n in GAMES]
    parallel = [n for n in results if n in PARALLEL]
    tables = (
        ("MinAtar", minatar),
        ("two-player games", games),
        ("agents moving at once", parallel),
        ("Crafter beside Craftax-Classic", [n for n in results if n == "crafter"]),
    )
    for title, chosen in tables:
        if chosen:
            out.print(f"\n{title}: every batch size, each anchor:\n")
            out.print(by_batch(results, chosen), markup=False)
    path.write_text(json.dumps(results, indent=2), encoding="utf-8")
    out.print(f"wrote {path}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
