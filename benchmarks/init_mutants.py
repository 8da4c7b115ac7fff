"""Inferred specs against every mutant: for each example with a known-good NumPy port,
`envport init` infers a spec from the env alone (default budget), then `envport verify`
with it must pass the known-good port and fail every non-equivalent NumPy mutant that the
hand-written spec fails. Prints a table and writes benchmarks/results/init_mutants.json.

    python benchmarks/init_mutants.py [EXAMPLE ...]

(The test suite checks the known-good ports and two mutants per example; this is the whole
list, about ten minutes on two cores.)
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from envport.verifiers.selfcheck import apply_mutant, load_mutants

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "init_mutants.json"
EXAMPLES = {
    "cartpole": "CartPole-v1",
    "acrobot": "Acrobot-v1",
    "mountaincar": "MountainCar-v0",
    "pendulum": "Pendulum-v1",
    "frozenlake": "FrozenLake-v1",
    "taxi": "Taxi-v4",
}


def envport(*args: str) -> int:
    command = [sys.executable, "-m", "envport", *args]
    return subprocess.run(command, capture_output=True, text=True, check=False).returncode


def main(names: list[str]) -> None:
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for name in names:
            spec = Path(scratch) / name
            if envport("init", EXAMPLES[name], "--out", str(spec)) != 0:
                rows.append({"example": name, "init": "failed"})
                continue
            port = ROOT / "examples" / name / "ports" / "numpy"
            good = envport("verify", str(spec), "--port", str(port)) == 0
            mutants = [
                m
                for m in load_mutants(ROOT / "examples" / name)
                if m.target == "numpy" and not m.equivalent
            ]
            missed = []
            for mutant in mutants:
                mutated = apply_mutant(mutant, port, Path(scratch) / f"{name}-{mutant.id}")
                if envport("verify", str(spec), "--port", str(mutated)) != 1:
                    missed.append(mutant.id)
            rows.append(
                {
                    "example": name,
                    "known_good_passes": good,
                    "mutants": len(mutants),
                    "failed_by_inferred_spec": len(mutants) - len(missed),
                    "missed": missed,
                }
            )
            row = rows[-1]
            print(
                f"{name:12} known-good {'pass' if good else 'FAIL':4}  "
                f"mutants failed {row['failed_by_inferred_spec']}/{row['mutants']}"
                + (f"  missed: {', '.join(missed)}" if missed else ""),
                flush=True,
            )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:] or list(EXAMPLES))
