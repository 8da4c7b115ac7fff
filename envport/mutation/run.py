"""Run `envport verify` on one mutant (cosmic-ray's worker applies it) and say what caught it."""

from __future__ import annotations

import json
import shlex
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from cosmic_ray.mutating import mutate_and_test
from cosmic_ray.work_item import TestOutcome, WorkerOutcome

from envport.io.scratch import remove_tree
from envport.io.tree import copy_tree, named
from envport.mutation.generate import Mutant

# What a verify run can say about a mutant. Killed and timeout count as caught; incompetent
# (the mutant could not be applied, or verify stopped on a usage or spec error and wrote no
# report) counts neither way and is listed.
KILLED, SURVIVED, TIMEOUT, INCOMPETENT = "killed", "survived", "timeout", "incompetent"
PORT_ERROR = "port error"  # the port failed to load, raised or hung: verify's own verdict


@dataclass
class Outcome:
    id: str
    status: str
    first: str | None = None  # the first check (in verify's order) that failed
    caught_by: list[str] = field(default_factory=list)
    error: str | None = None
    seconds: float = 0.0

    @property
    def level(self) -> str | None:
        """The level of the first failing check: l1, l2, l3 ... or `port error`."""
        return None if self.first is None else self.first.split(".")[0]

    def to_json(self) -> dict:
        return asdict(self)


def copy_port(port: Path, into: Path) -> Path:
    """A scratch copy of a port, named like the original (its name selects the target)."""
    copy = into / port.name
    if copy.exists():
        remove_tree(copy)
    copy_tree(port, copy, named("__pycache__"))
    return copy


def verify_command(spec: Path, port: Path, report: Path, verify_args: list[str]) -> str:
    words = [sys.executable, "-m", "envport", "verify", str(spec), "--port", str(port)]
    return shlex.join([*words, "--json", str(report), *verify_args])


def judge_report(name: str, report: Path, exit_killed: bool, output: str) -> Outcome:
    """What verify's JSON report says about one run (the mutant's id as `name`)."""
    if not report.is_file():
        tail = " ".join(output.strip().splitlines()[-2:])[:300]
        return Outcome(name, INCOMPETENT, error=f"verify wrote no report: {tail}")
    data = json.loads(report.read_text(encoding="utf-8"))
    failing = [
        level["level"] + (f".{level['mode']}" if level.get("mode") else "")
        for level in data["levels"]
        if not level["passed"]
    ]
    if data.get("error"):
        failing.append(PORT_ERROR)
    if data["passed"] != (not exit_killed):
        return Outcome(name, INCOMPETENT, error="verify's exit code and report disagree")
    if data["passed"]:
        return Outcome(name, SURVIVED)
    error = data.get("error")
    return Outcome(name, KILLED, failing[0], failing, error[:300] if error else None)


def run_mutant(
    mutant: Mutant | None,
    spec: Path,
    port_copy: Path,
    verify_args: list[str],
    timeout: float,
) -> Outcome:
    """Apply `mutant` to the copy (None: the unmutated baseline), run verify, restore."""
    report = port_copy.parent / "report.json"
    report.unlink(missing_ok=True)
    command = verify_command(spec, port_copy, report, verify_args)
    started = time.perf_counter()
    name = mutant.id if mutant is not None else "baseline"
    if mutant is None:
        from cosmic_ray.testing import run_tests

        test_outcome, output = run_tests(command, timeout)
        worker_outcome, detail = WorkerOutcome.NORMAL, output
    else:
        result = mutate_and_test([mutant.spec(port_copy)], command, timeout)
        test_outcome, worker_outcome, detail = (
            result.test_outcome,
            result.worker_outcome,
            result.output or "",
        )
    seconds = time.perf_counter() - started
    if worker_outcome != WorkerOutcome.NORMAL:
        outcome = Outcome(name, INCOMPETENT, error=f"cosmic-ray: {worker_outcome}: {detail[-300:]}")
    elif test_outcome == TestOutcome.KILLED and detail == "timeout":
        outcome = Outcome(name, TIMEOUT, "timeout", ["timeout"])
    elif test_outcome == TestOutcome.INCOMPETENT:
        outcome = Outcome(name, INCOMPETENT, error=detail[-300:])
    else:
        outcome = judge_report(name, report, test_outcome == TestOutcome.KILLED, detail)
    outcome.seconds = round(seconds, 2)
    return outcome
