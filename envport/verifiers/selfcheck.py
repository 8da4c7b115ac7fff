"""Mutation self-check: does the verifier catch known bugs planted in a known-good port?

A verifier that passes a wrong port is worse than none, so every behaviour-changing mutant
in the example's `mutants.toml` must make `verify` fail, and its replay command must show
the same divergence again.
"""

from __future__ import annotations

import shutil
import tempfile
import tomllib
from dataclasses import replace
from pathlib import Path

from pydantic import BaseModel

from envport.verifiers.divergence import Divergence
from envport.verifiers.verify import VerifyOptions, verify


class Mutant(BaseModel):
    id: str
    target: str
    file: str
    old: str
    new: str
    what: str
    equivalent: str | None = None


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

    @property
    def ok(self) -> bool:
        if self.equivalent:
            return not self.caught
        return self.caught and self.replay_matches is not False


def load_mutants(example: Path) -> list[Mutant]:
    data = tomllib.loads((example / "mutants.toml").read_text(encoding="utf-8"))
    return [Mutant.model_validate(entry) for entry in data["mutant"]]


def apply_mutant(mutant: Mutant, port: Path, destination: Path) -> Path:
    shutil.copytree(port, destination, ignore=shutil.ignore_patterns("__pycache__"))
    source = destination / mutant.file
    text = source.read_text(encoding="utf-8")
    # A mutant whose edit no longer applies would silently test the unmutated port.
    if text.count(mutant.old) != 1:
        raise ValueError(
            f"mutant {mutant.id}: `{mutant.old}` occurs {text.count(mutant.old)} times"
        )
    source.write_text(text.replace(mutant.old, mutant.new), encoding="utf-8")
    return destination


def _same(a: Divergence, b: Divergence) -> bool:
    return (a.episode, a.step, a.mode, [f.field for f in a.fields]) == (
        b.episode,
        b.step,
        b.mode,
        [f.field for f in b.fields],
    )


def check_mutant(example: Path, mutant: Mutant, options: VerifyOptions) -> MutantResult:
    with tempfile.TemporaryDirectory(prefix=f"envport-{mutant.id}-") as scratch:
        port = apply_mutant(
            mutant, example / "ports" / mutant.target, Path(scratch) / mutant.target
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
        )
        if first is not None and first.episode is not None:
            # The replay command's own options: one episode, one mode.
            again = verify(
                str(example),
                str(port),
                replace(options, mode=first.mode, only_episode=first.episode),
            )
            replayed = next((d for level in again.levels for d in level.divergences), None)
            result.replay_matches = replayed is not None and _same(first, replayed)
        return result


def run_selfcheck(example: Path, options: VerifyOptions | None = None) -> list[MutantResult]:
    options = options or VerifyOptions()
    return [check_mutant(example, mutant, options) for mutant in load_mutants(example)]
