"""Automatic mutation score: cosmic-ray's mutants of the known-good ports, judged by verify.

    python benchmarks/mutation_score.py [examples/NAME ...] [--backends jax,numpy]
        [--max-mutants N] [--files env.py,...] [--mutants ID,...] [--seed S]
        [--verify-args "--levels l1,l2,l3"] [--timeout SEC] [--jobs N]
        [--survivors FILE] [--out FILE] [--append-untriaged] [--no-cache]
    python benchmarks/mutation_score.py --retriage [--survivors FILE] [--out FILE]

Every known-good port in examples/*/ports/{jax,numpy} by default. cosmic-ray enumerates the
mutants of each port file; at most --max-mutants per file are drawn (seeded, uniform), each
applied to a scratch copy of the port by cosmic-ray's worker with `envport verify SPEC --port
COPY` as its test command. Prints the kill rate per example and per level (the first level
whose check failed), the survivors with their triage from --survivors (default
benchmarks/mutation_survivors.toml), and writes JSON to benchmarks/results/ (merged by
example and backend, so examples can be run one at a time). Exit 1 if a survivor is not
triaged (or its triage is stale) or an unmutated port fails.

`--retriage` verifies nothing: it applies the survivors file as it is now to the outcomes
--out already holds and recounts each port (survivors are triaged by hand after a run).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections import Counter
from pathlib import Path

from rich.console import Console
from rich.table import Table

try:
    from envport.mutation.generate import Mutant
    from envport.mutation.run import Outcome
    from envport.mutation.score import Cache, PortScore, plan_mutants, score_port
    from envport.mutation.triage import (
        EQUIVALENT,
        MISSED,
        STALE,
        UNTRIAGED,
        TriageError,
        load_triage,
        untriaged_entries,
        verdict,
        verdict_of,
    )
except ImportError as error:
    print(
        f"mutation_score: needs cosmic-ray ({error.name} is missing): pip install -e '.[mutation]'",
        file=sys.stderr,
    )
    raise SystemExit(2) from None

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
BACKENDS = ("jax", "numpy")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("examples", nargs="*", type=Path, help="example directories (all)")
    parser.add_argument("--backends", default="jax,numpy", help="comma list (jax,numpy)")
    parser.add_argument("--max-mutants", type=int, help="mutants drawn per port file at most")
    parser.add_argument("--files", help="comma list of port file names to mutate (all)")
    parser.add_argument("--mutants", help="comma list of mutant ids to run instead of a sample")
    parser.add_argument("--seed", type=int, default=0, help="seed of the sample")
    parser.add_argument(
        "--verify-args", default="", help="extra `envport verify` arguments, one string"
    )
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per verify run")
    parser.add_argument("--jobs", type=int, default=1, help="verify runs at once")
    parser.add_argument(
        "--survivors", type=Path, default=ROOT / "benchmarks" / "mutation_survivors.toml"
    )
    parser.add_argument("--out", type=Path, default=RESULTS / "mutation_score.json")
    parser.add_argument(
        "--append-untriaged",
        action="store_true",
        help="append untriaged survivors to --survivors, to be triaged by hand",
    )
    parser.add_argument("--no-cache", action="store_true", help="verify every mutant again")
    parser.add_argument(
        "--retriage", action="store_true", help="recount --out with today's survivors file"
    )
    return parser


def _ports(examples: list[Path], backends: list[str]) -> list[tuple[Path, str]]:
    if not examples:
        examples = sorted(p for p in (ROOT / "examples").iterdir() if p.is_dir())
    return [(e, b) for e in examples for b in backends if (e / "ports" / b).is_dir()]


def _progress(console: Console, score_name: str) -> object:
    def show(outcome: Outcome) -> None:
        where = f" at {outcome.first}" if outcome.first else ""
        console.print(
            f"  {score_name} {outcome.id}: {outcome.status}{where} ({outcome.seconds:.0f} s)",
            markup=False,
        )

    return show


def _tables(console: Console, scores: list[PortScore], triage: dict) -> None:
    table = Table(title="automatic mutation score (cosmic-ray mutants, envport verify)")
    columns = ("port", "generated", "verified", "killed", "survived", "equivalent", "missed")
    for column in (*columns, "untriaged", "incompetent", "kill rate", "first caught by"):
        table.add_column(column, justify="right" if column != "port" else "left")
    for score in scores:
        s = score.summary(triage)
        rate = "-" if s["kill_rate"] is None else f"{100 * s['kill_rate']:.1f}%"
        if not s["baseline_passed"]:
            rate = "unmutated port FAILS"
        first = ", ".join(f"{k} {v}" for k, v in s["first_level"].items()) or "-"
        table.add_row(
            f"{score.example}/{score.backend}",
            *(str(s[k]) for k in ("generated", "sampled", "killed", "survived", "equivalent")),
            *(str(s[k]) for k in ("missed", "untriaged", "incompetent")),
            rate,
            first,
        )
    console.print(table)
    for score in scores:
        for mutant in score.survivors():
            kind, reason = verdict(mutant, triage)
            console.print(f"survivor {mutant.id} [{kind}] {reason or ''}", markup=False)
            if kind in (UNTRIAGED, STALE):
                console.print(mutant.diff, markup=False)


def _payload(scores: list[PortScore], triage: dict, settings: dict, previous: dict) -> dict:
    ports = dict(previous.get("ports", {}))
    for score in scores:
        mutants = []
        for mutant in score.mutants:
            outcome = score.outcomes.get(mutant.id)
            entry = {"id": mutant.id, "line": mutant.line, "diff": mutant.diff}
            if outcome is not None:
                entry |= {k: v for k, v in outcome.to_json().items() if k != "id"}
                if outcome.status == "survived":
                    entry["triage"], entry["reason"] = verdict(mutant, triage)
            mutants.append(entry)
        ports[f"{score.example}/{score.backend}"] = {
            **score.summary(triage),
            "settings": settings,
            "baseline": None if score.baseline is None else score.baseline.to_json(),
            "mutants": mutants,
        }
    return {"ports": dict(sorted(ports.items()))}


def retriage(payload: dict, triage: dict) -> int:
    """The survivors' triage and each port's counts redone from the stored outcomes; how
    many survivors are still untriaged (or stale)."""
    pending = 0
    for port in payload.get("ports", {}).values():
        survivors = [m for m in port["mutants"] if m.get("status") == "survived"]
        for mutant in survivors:
            mutant["triage"], mutant["reason"] = verdict_of(mutant["id"], mutant["diff"], triage)
        verdicts = Counter(m["triage"] for m in survivors)
        judged = port["killed"] + len(survivors) - verdicts[EQUIVALENT]
        port["equivalent"], port["missed"] = verdicts[EQUIVALENT], verdicts[MISSED]
        port["untriaged"] = len(survivors) - verdicts[EQUIVALENT] - verdicts[MISSED]
        port["kill_rate"] = None if judged == 0 else round(port["killed"] / judged, 4)
        pending += port["untriaged"]
    return pending


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    console = Console(width=160, highlight=False)
    try:
        triage = load_triage(args.survivors)
    except TriageError as error:
        print(f"mutation_score: {error}", file=sys.stderr)
        return 2
    if args.retriage:
        if not args.out.is_file():
            print(f"mutation_score: --retriage: no scores in {args.out} yet", file=sys.stderr)
            return 2
        payload = json.loads(args.out.read_text())
        untriaged = retriage(payload, triage)
        args.out.write_text(json.dumps(payload, indent=2) + "\n")
        console.print(f"retriaged {args.out}: {untriaged} survivors untriaged", markup=False)
        return 1 if untriaged else 0
    backends = [b for b in args.backends.split(",") if b]
    unknown = [b for b in backends if b not in BACKENDS]
    if unknown:
        print(f"mutation_score: --backends: unknown {unknown[0]!r}", file=sys.stderr)
        return 2
    verify_args = shlex.split(args.verify_args)
    files = args.files.split(",") if args.files else None
    ids = args.mutants.split(",") if args.mutants else None
    settings = {
        "max_mutants": args.max_mutants,
        "seed": args.seed,
        "verify_args": verify_args,
        "files": files,
        "mutants": ids,
    }
    scores = []
    for example, backend in _ports(args.examples, backends):
        generated, mutants = plan_mutants(
            example.resolve(), backend, args.max_mutants, args.seed, files, ids
        )
        name = f"{example.name}/{backend}"
        console.print(f"{name}: {len(mutants)} of {generated} mutants", markup=False)
        cache_file = args.out.parent / "mutation_cache" / f"{name}.jsonl"
        cache = None if args.no_cache else Cache(cache_file)
        score = score_port(
            example.resolve(),
            backend,
            mutants,
            verify_args,
            args.timeout,
            args.jobs,
            cache,
            _progress(console, name),
        )
        score.generated = generated
        scores.append(score)
    _tables(console, scores, triage)
    previous = json.loads(args.out.read_text()) if args.out.is_file() else {}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(_payload(scores, triage, settings, previous), indent=2) + "\n")
    console.print(f"wrote {args.out}", markup=False)
    pending: list[Mutant] = [
        m for s in scores for m in s.survivors() if verdict(m, triage)[0] in (UNTRIAGED, STALE)
    ]
    if pending and args.append_untriaged:
        with args.survivors.open("a", encoding="utf-8") as handle:
            handle.write("\n" + untriaged_entries(pending))
        console.print(f"appended {len(pending)} survivors to {args.survivors}", markup=False)
    broken = [s for s in scores if not s.summary(triage)["baseline_passed"]]
    return 1 if pending or broken else 0


if __name__ == "__main__":
    raise SystemExit(main())
