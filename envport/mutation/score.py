"""Score one port: sample its cosmic-ray mutants, verify each, and count what was caught.

Outcomes are cached per mutant (by its id, its diff and the verify arguments) in a JSON-lines
file, so a long run that is interrupted continues where it stopped.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from envport.io.scratch import scratch as scratch_dir
from envport.mutation.generate import Mutant, enumerate_mutants, sample
from envport.mutation.run import (
    INCOMPETENT,
    KILLED,
    SURVIVED,
    TIMEOUT,
    Outcome,
    copy_port,
    run_mutant,
)
from envport.mutation.triage import EQUIVALENT, MISSED, Triage, verdict
from envport.spec import load_spec
from envport.targets.registry import port_dir


@dataclass
class PortScore:
    example: str
    backend: str
    generated: int = 0  # every mutant cosmic-ray makes in the port's files
    mutants: list[Mutant] = field(default_factory=list)  # the sample verified
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    baseline: Outcome | None = None

    def survivors(self) -> list[Mutant]:
        return [m for m in self.mutants if self.outcomes[m.id].status == SURVIVED]

    def summary(self, triage: dict[str, Triage]) -> dict:
        """Counts, the kill rate over non-equivalent mutants, and the first level to catch."""
        statuses = Counter(self.outcomes[m.id].status for m in self.mutants)
        verdicts = Counter(verdict(m, triage)[0] for m in self.survivors())
        caught = statuses[KILLED] + statuses[TIMEOUT]
        judged = caught + statuses[SURVIVED] - verdicts[EQUIVALENT]
        first = Counter(
            self.outcomes[m.id].level for m in self.mutants if self.outcomes[m.id].level
        )
        return {
            "generated": self.generated,
            "sampled": len(self.mutants),
            "killed": caught,
            "survived": statuses[SURVIVED],
            "equivalent": verdicts[EQUIVALENT],
            "missed": verdicts[MISSED],
            "untriaged": statuses[SURVIVED] - verdicts[EQUIVALENT] - verdicts[MISSED],
            "incompetent": statuses[INCOMPETENT],
            "kill_rate": None if judged == 0 else round(caught / judged, 4),
            "first_level": dict(sorted(first.items())),
            "baseline_passed": self.baseline is not None and self.baseline.status == SURVIVED,
        }


def port_files(port: Path, only: list[str] | None) -> list[str]:
    files = sorted(p.name for p in port.glob("*.py"))
    return [f for f in files if only is None or f in only]


def plan_mutants(
    example: Path,
    backend: str,
    max_mutants: int | None,
    seed: int,
    files: list[str] | None = None,
    ids: list[str] | None = None,
) -> tuple[int, list[Mutant]]:
    """(how many cosmic-ray generates, the sample to verify) for one example's port."""
    port = example / "ports" / backend
    generated, chosen = 0, []
    for name in port_files(port, files):
        every = enumerate_mutants(port, name, example.name, backend)
        generated += len(every)
        if ids is not None:
            chosen += [m for m in every if m.id in ids]
        else:
            chosen += sample(every, max_mutants, seed)
    return generated, chosen


def _key(mutant: Mutant, verify_args: list[str]) -> str:
    text = json.dumps([mutant.id, mutant.diff, verify_args])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class Cache:
    """Outcomes already measured, one JSON line each."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.known: dict[str, Outcome] = {}
        self._lock = threading.Lock()
        if path is not None and path.is_file():
            for line in path.read_text(encoding="utf-8").splitlines():
                entry = json.loads(line)
                key = entry.pop("key")
                self.known[key] = Outcome(**entry)

    def add(self, key: str, outcome: Outcome) -> None:
        self.known[key] = outcome
        if self.path is None:
            return
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps({"key": key, **outcome.to_json()}) + "\n")


def score_port(
    example: Path,
    backend: str,
    mutants: list[Mutant],
    verify_args: list[str],
    timeout: float,
    jobs: int = 1,
    cache: Cache | None = None,
    progress: Callable[[Outcome], None] | None = None,
) -> PortScore:
    """Verify the unmutated port, then each mutant, `jobs` at a time (each in its own copy)."""
    cache = cache or Cache(None)
    score = PortScore(example.name, backend, mutants=mutants)
    # A variant's port is its own files over its base's (envport.variant); only its own are
    # mutated (plan_mutants), its base's are scored with the base.
    port = port_dir(load_spec(example), example / "ports" / backend)
    with scratch_dir("envport-mutation-") as scratch:
        slots = [copy_port(port, Path(scratch) / f"slot{i}") for i in range(max(1, jobs))]
        score.baseline = run_mutant(None, example, slots[0], verify_args, timeout)
        if progress is not None:
            progress(score.baseline)
        if score.baseline.status != SURVIVED:
            return score  # a port that fails unmutated says nothing about its mutants
        todo = [m for m in mutants if _key(m, verify_args) not in cache.known]
        for mutant in mutants:
            if mutant not in todo:
                score.outcomes[mutant.id] = cache.known[_key(mutant, verify_args)]
        free = list(slots)
        lock = threading.Lock()

        def one(mutant: Mutant) -> None:
            with lock:
                slot = free.pop()
            try:
                outcome = run_mutant(mutant, example, slot, verify_args, timeout)
            finally:
                with lock:
                    free.append(slot)
            cache.add(_key(mutant, verify_args), outcome)
            score.outcomes[mutant.id] = outcome
            if progress is not None:
                progress(outcome)

        with ThreadPoolExecutor(max_workers=len(slots)) as pool:
            list(pool.map(one, todo))
    return score
