"""Mutation self-check: does the verifier catch known bugs planted in a known-good port?

A verifier that passes a wrong port is worse than none, so every behaviour-changing mutant
in the example's `mutants.toml` must make `verify` fail, and its replay command must show
the same divergence again.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import multiprocessing
import os
import tomllib
from concurrent.futures import ProcessPoolExecutor
from itertools import repeat
from pathlib import Path

from pydantic import BaseModel

from envport import heap
from envport.io.scratch import scratch as scratch_dir
from envport.io.tree import copy_tree, named
from envport.spec import load_spec
from envport.targets.registry import port_dir
from envport.verifiers.reporting.divergence import Divergence
from envport.verifiers.verify import DEFAULT_LEVELS, LEVELS, VerifyOptions, verify


class Mutant(BaseModel):
    id: str
    target: str
    file: str
    old: str
    new: str
    what: str
    equivalent: str | None = None
    # A level this mutant is known to slip past, with the reason (e.g. a rare state).
    missed_by: dict[str, str] = {}


class MutantResult(BaseModel):
    id: str
    target: str
    what: str
    equivalent: str | None
    caught: bool
    caught_by: list[str]
    first: Divergence | None = None
    error: str | None = None
    replay_matches: bool | None = None
    missed_by: dict[str, str] = {}
    harness_failed: bool = False

    @property
    def levels_catching(self) -> list[str]:
        """Which of load, l1, l2, l3 caught it, in that order."""
        order = ["load", *LEVELS]
        found = {name.split(".")[0] for name in self.caught_by}
        return [level for level in order if level in found]

    @property
    def first_level(self) -> str | None:
        return next(iter(self.levels_catching), None)

    @property
    def ok(self) -> bool:
        if self.harness_failed:
            return False
        if self.equivalent:
            return not self.caught
        expected_misses = all(level not in self.levels_catching for level in self.missed_by)
        return self.caught and self.replay_matches is not False and expected_misses


def mutants_file(example: Path) -> Path:
    """The example's `mutants.toml`; a variant without one of its own runs its base's."""
    return load_spec(example).harness_file("mutants.toml")


def load_mutants(example: Path) -> list[Mutant]:
    data = tomllib.loads(mutants_file(example).read_text(encoding="utf-8"))
    return [Mutant.model_validate(entry) for entry in data["mutant"]]


def known_good_port(example: Path, target: str) -> Path:
    """The example's known-good port for `target`, a variant's composed with its base's."""
    return port_dir(load_spec(example), example / "ports" / target)


def apply_mutant(mutant: Mutant, port: Path, destination: Path) -> Path:
    copy_tree(port, destination, named("__pycache__"))
    source = destination / mutant.file
    text = source.read_text(encoding="utf-8")
    # A mutant whose edit no longer applies would silently test the unmutated port.
    if text.count(mutant.old) != 1:
        raise ValueError(
            f"mutant {mutant.id}: `{mutant.old}` occurs {text.count(mutant.old)} times"
        )
    source.write_text(text.replace(mutant.old, mutant.new), encoding="utf-8")
    return destination


def same_divergence(a: Divergence, b: Divergence) -> bool:
    """The same case: level, place, input and the fields that differ."""

    def key(d: Divergence) -> tuple:
        fields = [f.field for f in d.fields]
        if d.episode is not None:  # a rollout: the same episode, step and fields
            return (*_rollout_kind(d), d.episode, d.step, d.start_state, fields)
        # A drawn example: the same check failing on the same fields. (Hypothesis's search
        # is seeded, but seen once under heavy load to reach a different first example.)
        return (d.level, d.mode, d.module, fields)

    return key(a) == key(b)


def _rollout_kind(d: Divergence) -> tuple[str, ...]:
    """Where a rollout's divergence was found. An explored rollout's replay plays the kept
    rollouts again, in their order, as proposed cases (explore.py): the same rollout."""
    if (d.level, d.mode) == ("l3", "explore") or d.level == "cases":
        return ("played rollout",)
    return (d.level, d.mode or "")


def replay(divergence: Divergence) -> Divergence | None:
    """Run a divergence's replay (in-process, the run its command line names) and return
    its first divergence."""
    case = divergence.replay_of
    if case is None:
        raise ValueError(f"a {divergence.level} divergence without its replay as data")
    # Only the first divergence is compared, so the run stops at the first check that
    # fails: a generator's mutant named by l2.reset does not re-run the rest of L2 (8,192
    # envs of Crafter's worlds) to have its replay judged.
    options = dataclasses.replace(case.options, fail_fast=True)
    again = verify(case.spec, case.port, options)
    return next((d for level in again.levels for d in level.divergences), None)


def check_mutant(example: Path, mutant: Mutant, options: VerifyOptions) -> MutantResult:
    try:
        return _check_mutant(example, mutant, options)
    except Exception as error:  # a harness failure on one mutant must not hide the others
        return MutantResult(
            id=mutant.id,
            target=mutant.target,
            what=mutant.what,
            equivalent=mutant.equivalent,
            caught=False,
            caught_by=[],
            error=f"harness error: {type(error).__name__}: {error}",
            harness_failed=True,
        )


def _check_mutant(example: Path, mutant: Mutant, options: VerifyOptions) -> MutantResult:
    with scratch_dir(f"envport-{mutant.id}-") as scratch:
        port = apply_mutant(
            mutant, known_good_port(example, mutant.target), Path(scratch) / mutant.target
        )
        report = verify(str(example), str(port), options)
        caught_by = [level.name for level in report.levels if not level.passed]
        if report.error:
            caught_by.insert(0, "load")
        first = next((d for level in report.levels for d in level.divergences), None)
        result = MutantResult(
            id=mutant.id,
            target=mutant.target,
            what=mutant.what,
            equivalent=mutant.equivalent,
            caught=not report.passed,
            caught_by=caught_by,
            first=first,
            error=report.error,
            missed_by=mutant.missed_by,
        )
        if first is not None and first.replay:
            replayed = replay(first)
            result.replay_matches = replayed is not None and same_divergence(first, replayed)
        return result


def run_selfcheck(
    example: Path,
    options: VerifyOptions | None = None,
    targets: tuple[str, ...] | None = None,
    processes: int | None = None,
    only: str | None = None,
) -> list[MutantResult]:
    """Every mutant (of `targets`, with an id matching the glob `only`) through every
    level. Unshrunk: the self-check needs verdicts, fast.

    Mutants are independent, so they run in `processes` processes (default: the cores)."""
    options = options or VerifyOptions(levels=DEFAULT_LEVELS, shrink=False)
    mutants = [m for m in load_mutants(example) if targets is None or m.target in targets]
    if only is not None:  # a glob of ids: the mutants one level is for (a generator's, L2)
        mutants = [m for m in mutants if fnmatch.fnmatchcase(m.id, only)]
        if not mutants:
            raise ValueError(f"no mutant of {example.name} has an id matching {only!r}")
    processes = processes or os.cpu_count() or 1
    if processes == 1:
        return [check_mutant(example, mutant, options) for mutant in mutants]
    # spawn, not fork: the parent may hold ZMQ sockets and JAX threads.
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(
        max_workers=processes, mp_context=context, initializer=heap.collect_in_batches
    ) as pool:
        return list(pool.map(check_mutant, repeat(example), mutants, repeat(options)))


def level_table(results: list[MutantResult]) -> dict[str, dict[str, int]]:
    """Per level: how many behaviour-changing mutants it catches, and how many it is the
    first (cheapest) level to catch."""
    counted = [r for r in results if not r.equivalent]
    return {
        level: {
            "catches": sum(level in r.levels_catching for r in counted),
            "first": sum(r.first_level == level for r in counted),
        }
        for level in ("load", *LEVELS)
    }
