"""Enumerate a port file's mutants with cosmic-ray and draw a reproducible sample of them."""

from __future__ import annotations

import difflib
import random
from dataclasses import dataclass
from pathlib import Path

from cosmic_ray.commands.init import init
from cosmic_ray.mutating import mutate_code
from cosmic_ray.plugins import get_operator
from cosmic_ray.work_db import WorkDB, use_db
from cosmic_ray.work_item import MutationSpec

from envport.io.scratch import scratch as scratch_dir


@dataclass(frozen=True)
class Mutant:
    """One cosmic-ray mutation of one file of one example's port."""

    example: str
    backend: str
    file: str  # relative to the port directory
    operator: str  # cosmic-ray's name, e.g. core/ReplaceComparisonOperator_Lt_Gt
    occurrence: int  # which place in the file the operator applies to (cosmic-ray's count)
    start: tuple[int, int]  # (line, column) of the mutated code
    end: tuple[int, int]
    diff: str

    @property
    def line(self) -> int:
        return self.start[0]

    @property
    def id(self) -> str:
        return f"{self.example}/{self.backend}/{self.file}:{self.operator}#{self.occurrence}"

    def spec(self, port_copy: Path) -> MutationSpec:
        """The cosmic-ray mutation, applied to `port_copy`'s file."""
        return MutationSpec(
            module_path=port_copy / self.file,
            operator_name=self.operator,
            occurrence=self.occurrence,
            start_pos=self.start,
            end_pos=self.end,
        )


def unified_diff(original: str, mutated: str, name: str) -> str:
    lines = difflib.unified_diff(
        original.splitlines(keepends=True),
        mutated.splitlines(keepends=True),
        fromfile=f"a/{name}",
        tofile=f"b/{name}",
        n=1,
    )
    return "".join(lines)


def enumerate_mutants(port: Path, file: str, example: str, backend: str) -> list[Mutant]:
    """Every mutant cosmic-ray's operators make in `port/file`, in its own order."""
    path = port / file
    source = path.read_text(encoding="utf-8")
    # cosmic-ray's own enumeration (`cosmic-ray init`), into a session database of its own.
    with (
        scratch_dir("envport-mutants-") as scratch,
        use_db(Path(scratch) / "session.sqlite", WorkDB.Mode.create) as db,
    ):
        init([path], db, {})
        items = [item.mutations[0] for item in db.work_items]
    mutants = []
    for spec in sorted(items, key=lambda s: (s.operator_name, s.occurrence)):
        operator = get_operator(spec.operator_name)(**spec.operator_args)
        mutated = mutate_code(source, operator, spec.occurrence)
        if mutated is None or mutated == source:
            continue
        mutants.append(
            Mutant(
                example=example,
                backend=backend,
                file=file,
                operator=spec.operator_name,
                occurrence=spec.occurrence,
                start=tuple(spec.start_pos),
                end=tuple(spec.end_pos),
                diff=unified_diff(source, mutated, file),
            )
        )
    return mutants


def sample(mutants: list[Mutant], limit: int | None, seed: int) -> list[Mutant]:
    """At most `limit` mutants of one file, drawn uniformly (seeded by the file's identity, so
    a file's sample does not change when other files are added), in file order."""
    if limit is None or len(mutants) <= limit:
        chosen = mutants
    else:
        key = f"{seed}:{mutants[0].example}/{mutants[0].backend}/{mutants[0].file}"
        chosen = random.Random(key).sample(mutants, limit)
    return sorted(chosen, key=lambda m: (m.line, m.operator, m.occurrence))
