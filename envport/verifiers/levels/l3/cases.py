"""Proposed cases: start states and action sequences a model proposed as targeted tests.

A case is data, not code: the harness plays it on the reference (the oracle) and on the
port, and compares every step like a free-running L3 episode. So a proposal can sharpen
the checks but never grade the port itself (docs/design.md, contract 6).

    [[case]]
    state = { physics = [2.35, 0.0, 0.01, 0.0], elapsed_steps = 498 }
    actions = [1, 1, 0]

A structured state's leaves are named by path (docs/structured-state.md); a declared list
may be given as its items alone: `state = { "hand.player" = [1, 10], "hand.dealer" = [10, 6] }`.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from envport import structure
from envport.spec import PortSpec
from envport.structure import leaf_names
from envport.targets.reference import Reference
from envport.verifiers.draws.policies import EpisodePlan
from envport.verifiers.levels.l3 import rollout as l3
from envport.verifiers.levels.l3.played import Played
from envport.verifiers.options import L3Options
from envport.verifiers.reporting.divergence import LevelResult
from envport.verifiers.reporting.replay import Replay

MAX_ACTIONS = 1000


class Case(BaseModel):
    model_config = ConfigDict(extra="forbid")
    state: dict[str, Any] = Field(default_factory=dict)
    actions: list[Any] = Field(min_length=1, max_length=MAX_ACTIONS)


def load_cases(directory: Path, spec: PortSpec) -> tuple[list[tuple[str, Case]], list[str]]:
    """Usable cases by file, and one line for each proposal that could not be used."""
    cases: list[tuple[str, Case]] = []
    unusable: list[str] = []
    for path in sorted(directory.glob("*.toml")):
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
            found = [Case.model_validate(entry) for entry in data.get("case", [])]
        except (tomllib.TOMLDecodeError, ValidationError, UnicodeDecodeError) as error:
            unusable.append(f"{path.name}: {str(error).splitlines()[0]}")
            continue
        for number, case in enumerate(found):
            known = set(leaf_names(spec.state)) if spec.state.names else set(case.state)
            unknown = set(case.state) - known
            if unknown:
                unusable.append(
                    f"{path.name} case {number}: unknown state field {sorted(unknown)[0]}"
                )
                continue
            cases.append((f"{path.name}#{number}", case))
    return cases, unusable


def given_state(spec: PortSpec, case: Case) -> dict[str, np.ndarray]:
    """A case's state as leaves: a declared list may be given as its items alone
    (`"hand.player" = [1, 10]`), its padding and length then follow from them."""
    lists = structure.lists(spec.state)
    given = {k: np.asarray(v) for k, v in case.state.items()}
    for name in lists:
        if name in case.state and structure.length_leaf(name) not in case.state:
            given |= structure.encode(spec.state, {name: case.state[name]})
    return given


def play_case(reference: Reference, index: int, case: Case) -> Played:
    reference.reset(0)
    reference.write_state({**reference.read_state(), **given_state(reference.spec, case)})
    states, outputs = [], []
    for action in case.actions:
        states.append(reference.read_state())
        out = reference.step(action)
        outputs.append(out)
        if out.terminated or out.truncated:
            break
    return Played.episode(EpisodePlan(index, 0, "proposed", None), states, case.actions, outputs)


def run_cases(
    spec: PortSpec, reference: Reference, worker: Any, directory: Path, replay: Replay
) -> LevelResult:
    cases, unusable = load_cases(directory, spec)
    if not cases:
        note = f"; {len(unusable)} unusable: {unusable[0]}" if unusable else ""
        return LevelResult(level="cases", mode=f"proposed (none to run{note})", passed=True)
    played = Played.join([play_case(reference, i, case) for i, (_, case) in enumerate(cases)])
    result = worker.request(l3.free_request(played))
    options = L3Options(episodes=len(played), steps=MAX_ACTIONS, mode="free")
    level = l3.judge(spec, played, result, "free", options, replay)
    level.level, level.mode = "cases", "proposed"
    for divergence in level.divergences:
        divergence.level = "cases"
        divergence.message = f"proposed case {cases[divergence.episode or 0][0]}"
    if unusable:
        level.mode += f" ({len(unusable)} unusable: {unusable[0]})"
    return level
