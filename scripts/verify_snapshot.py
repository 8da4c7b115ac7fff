"""Snapshot every example's known-good verify reports, and diff two snapshots.

Used to show that a change which should not alter behaviour (a reorganisation of modules)
leaves every report as it was:

    python scripts/verify_snapshot.py run /tmp/before     # on the old checkout
    python scripts/verify_snapshot.py run /tmp/after      # on the new one
    python scripts/verify_snapshot.py diff /tmp/before /tmp/after

`run` calls `envport verify EXAMPLE --port PORT --levels l1,l2 --explore-steps 0 --json ...`
for every examples/*/ports/{numpy,jax,rust} port, one process at a time. By default only L1
and L2, and no exploration, to keep a snapshot affordable (a few minutes on two cores);
`--levels l1,l2,l3` adds the rollouts, `--examples a,b` keeps to some examples.
`--mutants frozenlake,mountaincar` also verifies every mutant in those examples'
mutants.toml (applied to a copy of the known-good port, as the self-check does), so a change
is held to what the checks find on wrong ports too.
`--repo DIR` snapshots another checkout (run it with that checkout's own Python, so its
envport is the one verifying). Each report is written masked: timings (`seconds`, and
durations printed in notes), and paths of scratch directories, differ from run to run and
are replaced by placeholders, so the diff shows only what the checks found.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent  # --repo overrides it
TARGETS = ("numpy", "jax", "rust")
# Keys whose values are wall-clock measures: different on every run.
TIMING_KEYS = re.compile(r"(^|_)(seconds|duration|elapsed|time|started|finished)s?($|_)")
# Durations written into prose ("total 5.33 s", "in 12 ms") and scratch paths.
DURATION = re.compile(r"\d+(\.\d+)?\s?(s|ms|µs|min)\b")
SCRATCH = re.compile(r"/tmp/[^\s\"',)]*")


def known_good_ports(repo: Path, only: list[str]) -> list[tuple[str, Path]]:
    """(snapshot name, port directory) of every example's numpy/jax/rust port (of the
    examples named in `only`, when it names any)."""
    found = []
    for example in sorted((repo / "examples").iterdir()):
        if only and example.name not in only:
            continue
        for target in TARGETS:
            port = example / "ports" / target
            if port.is_dir():
                found.append((f"{example.name}-{target}", port))
    return found


def mask(value: object) -> object:
    if isinstance(value, dict):
        return {
            key: "<time>" if TIMING_KEYS.search(key) else mask(item) for key, item in value.items()
        }
    if isinstance(value, list):
        return [mask(item) for item in value]
    if isinstance(value, str):
        return DURATION.sub("<duration>", SCRATCH.sub("<scratch>", value))
    return value


def mutant_ports(repo: Path, example: str, scratch: Path) -> list[tuple[str, Path]]:
    """(snapshot name, mutated copy of the known-good port) of every mutant of `example`."""
    folder = repo / "examples" / example
    entries = tomllib.loads((folder / "mutants.toml").read_text(encoding="utf-8"))["mutant"]
    found = []
    for entry in entries:
        port = scratch / entry["id"] / "ports" / entry["target"]
        if not port.exists():
            shutil.copytree(folder / "ports" / entry["target"], port)
            source = port / entry["file"]
            text = source.read_text(encoding="utf-8")
            if text.count(entry["old"]) != 1:  # an edit that no longer applies tests nothing
                raise SystemExit(f"mutant {entry['id']}: its `old` text is not found once")
            source.write_text(text.replace(entry["old"], entry["new"]), encoding="utf-8")
        found.append((f"{example}-mutant-{entry['id']}", port))
    return found


def snapshot(repo: Path, example: Path, port: Path, levels: str, out: Path) -> dict:
    raw = out.with_suffix(".raw.json")
    command = [sys.executable, "-m", "envport", "verify", str(example), "--port", str(port)]
    command += ["--levels", levels, "--explore-steps", "0", "--json", str(raw)]
    done = subprocess.run(command, cwd=repo, capture_output=True, text=True)
    report = json.loads(raw.read_text()) if raw.exists() else None
    raw.unlink(missing_ok=True)
    result = {"exit": done.returncode, "report": mask(report)}
    if report is None:
        result["stderr"] = mask(done.stderr.strip().splitlines()[-1:])
    return result


def run(out: Path, repo: Path, levels: str, examples: list[str], mutants: list[str]) -> int:
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="envport-snapshot-") as scratch:
        # Paths inside the checkout are given relative to it, so two checkouts' reports agree.
        ports = [
            (name, port.relative_to(repo), port.parent.parent.relative_to(repo))
            for name, port in known_good_ports(repo, examples)
        ]
        for varied in mutants:
            ports += [
                (name, port, Path("examples") / varied)
                for name, port in mutant_ports(repo, varied, Path(scratch))
            ]
        for name, port, example in ports:
            target = out / f"{name}.json"
            if target.exists():  # a run stopped part way resumes where it was
                continue
            result = snapshot(repo, example, port, levels, target)
            target.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
            print(f"{name}: exit {result['exit']}", flush=True)
    return 0


def diff(before: Path, after: Path) -> int:
    names = sorted({p.name for p in before.glob("*.json")} | {p.name for p in after.glob("*.json")})
    differing = 0
    for name in names:
        old, new = before / name, after / name
        if not (old.exists() and new.exists()):
            print(f"{name}: only in {'before' if old.exists() else 'after'}")
            differing += 1
            continue
        if old.read_text() != new.read_text():
            differing += 1
            shown = subprocess.run(["diff", "-u", str(old), str(new)], capture_output=True)
            print(shown.stdout.decode()[:4000])
    print(f"{len(names)} reports compared, {differing} differ")
    return 1 if differing else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    take = sub.add_parser("run")
    take.add_argument("out", type=Path)
    take.add_argument("--repo", type=Path, default=REPO, help="the checkout to snapshot")
    take.add_argument("--levels", default="l1,l2", help="levels to verify (l1,l2)")
    take.add_argument("--examples", default="", help="examples whose ports to verify (all)")
    take.add_argument("--mutants", default="", help="examples whose mutants to verify too")
    compare = sub.add_parser("diff")
    compare.add_argument("before", type=Path)
    compare.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.command == "run":
        examples = [name for name in args.examples.split(",") if name]
        mutants = [name for name in args.mutants.split(",") if name]
        return run(args.out, args.repo.resolve(), args.levels, examples, mutants)
    return diff(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main())
