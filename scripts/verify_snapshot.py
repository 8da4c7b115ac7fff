"""Snapshot every example's known-good verify reports, and diff two snapshots.

Used to show that a change which should not alter behaviour (a reorganisation of modules)
leaves every report as it was:

    python scripts/verify_snapshot.py run /tmp/before     # on the old checkout
    python scripts/verify_snapshot.py run /tmp/after      # on the new one
    python scripts/verify_snapshot.py diff /tmp/before /tmp/after

`run` calls `envport verify EXAMPLE --port PORT --levels l1,l2 --explore-steps 0 --json ...`
for every examples/*/ports/{numpy,jax,rust} port, one process at a time. Only L1 and L2,
and no exploration, to keep a snapshot affordable (a few minutes on two cores); L3 rolls out
hundreds of episodes per port. Each report is written masked: timings (`seconds`, and
durations printed in notes), and paths of scratch directories, differ from run to run and
are replaced by placeholders, so the diff shows only what the checks found.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TARGETS = ("numpy", "jax", "rust")
# Keys whose values are wall-clock measures: different on every run.
TIMING_KEYS = re.compile(r"(^|_)(seconds|duration|elapsed|time|started|finished)s?($|_)")
# Durations written into prose ("total 5.33 s", "in 12 ms") and scratch paths.
DURATION = re.compile(r"\d+(\.\d+)?\s?(s|ms|µs|min)\b")
SCRATCH = re.compile(r"/tmp/[^\s\"',)]*")


def known_good_ports() -> list[tuple[str, Path]]:
    """(snapshot name, port directory) of every example's numpy/jax/rust port."""
    found = []
    for example in sorted((REPO / "examples").iterdir()):
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


def run(out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    for name, port in known_good_ports():
        example = port.parent.parent
        if (out / f"{name}.json").exists():  # a run stopped part way resumes where it was
            continue
        raw = out / f"{name}.raw.json"
        command = [
            sys.executable,
            "-m",
            "envport",
            "verify",
            str(example.relative_to(REPO)),
            "--port",
            str(port.relative_to(REPO)),
            "--levels",
            "l1,l2",
            "--explore-steps",
            "0",
            "--json",
            str(raw),
        ]
        done = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
        report = json.loads(raw.read_text()) if raw.exists() else None
        raw.unlink(missing_ok=True)
        snapshot = {"exit": done.returncode, "report": mask(report)}
        if report is None:
            snapshot["stderr"] = mask(done.stderr.strip().splitlines()[-1:])
        (out / f"{name}.json").write_text(json.dumps(snapshot, indent=1, sort_keys=True) + "\n")
        print(f"{name}: exit {done.returncode}", flush=True)
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
    sub.add_parser("run").add_argument("out", type=Path)
    compare = sub.add_parser("diff")
    compare.add_argument("before", type=Path)
    compare.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.command == "run":
        return run(args.out)
    return diff(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main())
