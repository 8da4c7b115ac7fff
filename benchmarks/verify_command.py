"""The whole `envport verify` command as a user runs it, timed from outside, per checkout.

Used by verify_speed.py. Each run is a fresh subprocess (`python -m envport verify SPEC
--port PORT --json FILE`) timed by the wall clock, so interpreter start-up, imports, the
worker's start, every level, coverage and report writing are all in the figure. The report
the run writes gives the breakdown: its `seconds` (setup, port load wait, each level, the
plain replay, coverage where the checkout times it, total) and L3's compile time; what lies
outside `total` is start-up, imports and report writing, of which `envport verify --help`
(interpreter start and the command line's imports) is timed apart.

A checkout runs with its own `.venv` when it has one, else this interpreter with the
checkout first on PYTHONPATH (the sandboxed worker is given the same path), so before and
after come from one run on one machine. A warm-up run, not counted, lets Python write the
checkout's bytecode caches (as an installed envport has them): PYTHONDONTWRITEBYTECODE is
taken out of the children's environment for that reason. The checkouts' runs alternate,
so a load that comes and goes on a shared machine weighs on each alike.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

# The report's own buckets, in the order a run goes through them.
PHASES = ("setup", "port_load_wait", "l1", "l2", "l3", "plain", "coverage")


@dataclass
class Checkout:
    root: Path
    label: str

    @property
    def python(self) -> str:
        own = self.root / ".venv" / "bin" / "python"
        return str(own) if own.exists() else sys.executable

    def environment(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        paths = [str(self.root), *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
        env["PYTHONPATH"] = os.pathsep.join(paths)
        return env


@dataclass
class CommandTiming:
    checkout: str
    example: str
    backend: str
    walls: list[float] = field(default_factory=list)
    phases: list[dict[str, float]] = field(default_factory=list)
    startup: float = 0.0

    @property
    def wall(self) -> float:
        return statistics.median(self.walls)

    def phase(self, name: str) -> float | None:
        """The median of one bucket over the runs (None: this checkout does not time it)."""
        found = [p[name] for p in self.phases if name in p]
        return statistics.median(found) if found else None

    def as_json(self) -> dict:
        phases = {name: self.phase(name) for name in (*PHASES, "l3_compile", "total")}
        total = phases["total"] or 0.0
        return {
            "checkout": self.checkout,
            "example": self.example,
            "backend": self.backend,
            "wall_s": self.wall,
            "walls_s": self.walls,
            "startup_s": self.startup,
            "outside_total_s": self.wall - total,
            "phases_s": phases,
        }


def _run(checkout: Checkout, arguments: list[str], cache: Path | None = None) -> float:
    started = time.perf_counter()
    environment = checkout.environment()
    if cache is not None:
        environment["ENVPORT_CACHE_DIR"] = str(cache)
    done = subprocess.run(
        [checkout.python, "-m", "envport", *arguments],
        cwd=checkout.root,
        env=environment,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - started
    # Exit 1 is a verdict (a third-party bridge that diverges, pgx's Seaquest): its verify
    # took the time it took, and the report is written. Anything else is a failure to run.
    report = Path(arguments[arguments.index("--json") + 1]) if "--json" in arguments else None
    written = report is not None and report.is_file()
    if done.returncode not in (0, 1) or (done.returncode == 1 and not written):
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise SystemExit(f"{checkout.label}: envport {' '.join(arguments)} failed: {tail}")
    return wall


def _phases(report: dict) -> dict[str, float]:
    seconds = {k: float(v) for k, v in report.get("seconds", {}).items()}
    compiled = [level.get("seconds", {}).get("port_compile", 0.0) for level in report["levels"]]
    seconds["l3_compile"] = float(sum(compiled))
    return seconds


def time_command(
    checkouts: list[Checkout], example: str, backend: str, repeats: int, cold: bool = False
) -> list[CommandTiming]:
    """Each checkout's runs of one port, taken in turn (A, B, A, B, ...) so that the load
    of a shared machine falls on all of them alike; one warm-up run each first.

    Each checkout has a cache home of its own (`ENVPORT_CACHE_DIR`, in a scratch directory)
    that the warm-up fills, so the timed runs find a JAX port's compiled programs there
    (warm); `cold` gives every timed run an empty one instead, as a port's first verify."""
    spec = f"examples/{example}"
    port = f"examples/{example}/ports/{backend}"
    timings = [CommandTiming(checkout.label, example, backend) for checkout in checkouts]
    with tempfile.TemporaryDirectory(prefix="verify-speed-") as scratch:
        out = Path(scratch) / "report.json"
        arguments = ["verify", spec, "--port", port, "--json", str(out)]
        homes = [Path(scratch) / f"cache-{index}" for index in range(len(checkouts))]
        for checkout, home in zip(checkouts, homes, strict=True):
            _run(checkout, arguments, home)
        for repeat in range(repeats):
            for index, (checkout, timing) in enumerate(zip(checkouts, timings, strict=True)):
                home = Path(scratch) / f"cold-{index}-{repeat}" if cold else homes[index]
                timing.walls.append(_run(checkout, arguments, home))
                timing.phases.append(_phases(json.loads(out.read_text(encoding="utf-8"))))
    for checkout, timing in zip(checkouts, timings, strict=True):
        timing.startup = statistics.median(
            _run(checkout, ["verify", "--help"]) for _ in range(max(repeats, 3))
        )
    return timings
