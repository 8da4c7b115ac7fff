"""Proposed cases: start states and action sequences a model proposed as targeted tests.

A case is data, not code: the harness plays it on the reference (the oracle) and on the
port, and compares every step like a free-running L3 episode. So a proposal can sharpen
the checks but never grade the port itself (docs/design.md, contract 6).

    [[case]]
    state = { physics = [2.35, 0.0, 0.01, 0.0], elapsed_steps = 498 }
    actions = [1, 1, 0]

A structured state's leaves are named by path (docs/structured-state.md); a declared list
may be given as its items alone: `state = { "hand.player" = [1, 10], "hand.dealer" = [10, 6] }`.

A case's start state is made up, as a drawn one is: the port is asked first whether it can
hold it (its `can_hold`), and a case it refuses is counted as a gap, or past
`levels.unheld_ceiling` a failure (reporting/held.py), never played.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from envport import structure
from envport.io.toml_text import value
from envport.serve.ops import Requester
from envport.spec import PortSpec
from envport.structure import leaf_names
from envport.targets.reference import Reference
from envport.verifiers.draws.policies import EpisodePlan
from envport.verifiers.levels.l3 import rollout as l3
from envport.verifiers.levels.l3.played import Played
from envport.verifiers.options import L3Options
from envport.verifiers.reporting.divergence import Divergence, LevelResult
from envport.verifiers.reporting.held import Unheld, held_rows
from envport.verifiers.reporting.replay import Replay

MAX_ACTIONS = 1000
# A proposal is the model's text, kept for the rest of the run: one that is huge, or that
# asks for more cases than a check can afford, is refused by its size, not by a slow check.
MAX_CASE_BYTES = 256 * 1024
MAX_CASES = 256


class Case(BaseModel):
    model_config = ConfigDict(extra="forbid")
    state: dict[str, Any] = Field(default_factory=dict)
    actions: list[Any] = Field(min_length=1, max_length=MAX_ACTIONS)


class UnusableCase(ValueError):
    """Why a proposed case cannot be played: its own failure, never the run's."""


# (the case's name, why it cannot be used)
Unusable = tuple[str, str]


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0][:200]}" if text else type(error).__name__


def _invalid(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "the case"
    return f"{where}: {first['msg']}"[:200]


def _entries(text: str) -> list[Any]:
    """The `[[case]]` entries of a proposal's text, or UnusableCase."""
    if len(text.encode("utf-8", "replace")) > MAX_CASE_BYTES:
        raise UnusableCase(f"larger than {MAX_CASE_BYTES // 1024} KiB")
    try:
        # RecursionError: TOML arrays nested thousands deep.
        data = tomllib.loads(text)
    except (ValueError, RecursionError) as error:
        raise UnusableCase(_first_line(error)) from None
    entries = data.get("case", [])
    if not isinstance(entries, list):
        raise UnusableCase("`case` must be an array of tables (`[[case]]`)")
    return entries


def _read(path: Path) -> list[Any]:
    """The `[[case]]` entries of a proposal file, or UnusableCase."""
    try:
        if path.stat().st_size > MAX_CASE_BYTES:
            raise UnusableCase(f"larger than {MAX_CASE_BYTES // 1024} KiB")
        text = path.read_text(encoding="utf-8")
    except (OSError, ValueError) as error:
        if isinstance(error, UnusableCase):
            raise
        raise UnusableCase(_first_line(error)) from None
    return _entries(text)


def _validated(
    file: str, entries: list[Any], spec: PortSpec, room: int
) -> tuple[list[tuple[str, Case]], list[Unusable]]:
    """A file's entries as cases named `file#n` (at most `room` of them), and the rest with
    the reason each cannot be used."""
    cases: list[tuple[str, Case]] = []
    unusable: list[Unusable] = []
    known = set(leaf_names(spec.state)) if spec.state.names else None
    for number, entry in enumerate(entries):
        name = f"{file}#{number}"
        try:
            case = Case.model_validate(entry)
        except ValidationError as error:
            unusable.append((name, _invalid(error)))
            continue
        unknown = set(case.state) - (known if known is not None else set(case.state))
        if unknown:
            unusable.append((name, f"unknown state field {sorted(unknown)[0]}"))
        elif len(cases) == room:
            unusable.append((name, f"more than {MAX_CASES} proposed cases; not run"))
        else:
            cases.append((name, case))
    return cases, unusable


def load_cases(directory: Path, spec: PortSpec) -> tuple[list[tuple[str, Case]], list[Unusable]]:
    """Usable cases by name (`file.toml#n`), and each proposal that could not be used with
    the reason; a bad entry leaves the file's other cases usable."""
    cases: list[tuple[str, Case]] = []
    unusable: list[Unusable] = []
    for path in sorted(directory.glob("*.toml")):
        try:
            entries = _read(path)
        except UnusableCase as error:
            unusable.append((path.name, str(error)))
            continue
        found, bad = _validated(path.name, entries, spec, MAX_CASES - len(cases))
        cases += found
        unusable += bad
    return cases, unusable


def proposal_problem(reference: Reference, file: str, text: str) -> Unusable | None:
    """The first reason the proposed case file `text` could not be used, trying each case on
    the reference, or None: so an answer proposing one is asked again, before the case is
    kept for the rest of the run."""
    try:
        entries = _entries(text)
    except UnusableCase as error:
        return (file, str(error))
    cases, unusable = _validated(file, entries, reference.spec, MAX_CASES)
    if unusable:
        return unusable[0]
    for index, (name, case) in enumerate(cases):
        try:
            play_case(reference, index, case)
        except UnusableCase as error:
            return (name, str(error))
    return None


def given_state(spec: PortSpec, case: Case) -> dict[str, np.ndarray]:
    """A case's state as leaves: a declared list may be given as its items alone
    (`"hand.player" = [1, 10]`), its padding and length then follow from them."""
    lists = structure.lists(spec.state)
    given = {k: np.asarray(v) for k, v in case.state.items()}
    for name in lists:
        if name in case.state and structure.length_leaf(name) not in case.state:
            given |= structure.encode(spec.state, {name: case.state[name]})
    return given


def _numbers(what: str, value: Any) -> np.ndarray:
    array = np.asarray(value)
    if array.dtype.kind not in "biuf":
        raise UnusableCase(f"{what} is not numbers")
    if array.dtype.kind == "f" and not np.isfinite(array).all():
        raise UnusableCase(f"{what} is not finite")
    return array


def _as_leaf(name: str, value: np.ndarray, like: np.ndarray) -> np.ndarray:
    """`value` as the reference's own leaf `like` holds it: the same shape, and a value the
    leaf's type keeps exactly (an integer out of its range would wrap, silently)."""
    value = _numbers(f"state field {name}", value)
    if value.shape != like.shape:
        raise UnusableCase(
            f"state field {name} has shape {value.shape}; the reference's is {like.shape}"
        )
    if like.dtype.kind in "biu":
        with np.errstate(all="ignore"):
            cast = value.astype(like.dtype)
        if not np.array_equal(cast, value):
            raise UnusableCase(f"state field {name} does not fit the reference's {like.dtype}")
        return cast
    return value.astype(like.dtype)


def _checked_action(reference: Reference, action: Any) -> Any:
    array = _numbers("an action", action)
    shape = getattr(reference.action_space, "shape", None)
    if shape is not None and array.shape != tuple(shape):
        raise UnusableCase(f"an action has shape {array.shape}; the env's is {tuple(shape)}")
    return action


def play_case(reference: Reference, index: int, case: Case) -> Played:
    """The case played on the reference; UnusableCase when the reference cannot take its
    state or its actions (a hostile or mistaken proposal, e.g. a wrong type, a value out of
    range, a state the reference raises on)."""
    try:
        reference.reset(0)
        current = reference.read_state()
        given = given_state(reference.spec, case)
        start = {k: _as_leaf(k, v, np.asarray(current[k])) for k, v in given.items()}
        actions = [_checked_action(reference, action) for action in case.actions]
        reference.write_state({**current, **start})
        states, outputs = [], []
        for action in actions:
            states.append(reference.read_state())
            out = reference.step(action)
            outputs.append(out)
            if out.terminated or out.truncated:
                break
        return Played.episode(EpisodePlan(index, 0, "proposed", None), states, actions, outputs)
    except UnusableCase:
        raise
    except Exception as error:  # the trusted reference, fed a hostile case
        raise UnusableCase(f"the reference cannot play it: {_first_line(error)}") from None


def _unusable_result(unusable: list[Unusable]) -> LevelResult:
    """One failed check naming each case that could not be used, with its reason."""
    divergences = [
        Divergence(level="cases", mode="unusable", message=f"proposed case {name}: {reason}")
        for name, reason in unusable
    ]
    first = divergences[0].message
    more = f" (and {len(unusable) - 1} more)" if len(unusable) > 1 else ""
    return LevelResult(
        level="cases",
        mode="unusable",
        passed=False,
        episodes=len(unusable),
        divergences=divergences,
        note=f"{first}{more}",
    )


def held_starts(worker: Requester, episodes: list[Played]) -> list[bool]:
    """Whether the port can hold each episode's start state (one `holds` request)."""
    held = held_rows(worker, Played.join(episodes).start_states()) if episodes else None
    return [True] * len(episodes) if held is None else [bool(kept) for kept in held]


def cases_text(played: Played, heading: str) -> str:
    """Episodes the reference played as a proposed cases file (their start states and
    actions), so `--cases` plays them again."""
    lines = []
    for number, start in enumerate(played.starts):
        state = {name: values[start].tolist() for name, values in played.states.items()}
        end = int(start + played.lengths[number])
        actions = [np.asarray(a).tolist() for a in played.actions[int(start) : end]]
        lines.append(f"[[case]]\nstate = {value(state)}\nactions = {value(actions)}\n")
    return f"# {heading}\n" + "\n".join(lines)


def run_cases(
    spec: PortSpec, reference: Reference, worker: Requester, directory: Path, replay: Replay
) -> list[LevelResult]:
    """The playable cases compared like free-running L3 episodes; each case that cannot be
    loaded or played is a named failure of `cases.unusable`, and the rest still run. A case
    whose start state the port cannot hold is counted, not played (reporting/held.py)."""
    cases, unusable = load_cases(directory, spec)
    playable: list[tuple[str, Played]] = []
    for name, case in cases:
        try:
            playable.append((name, play_case(reference, len(playable), case)))
        except UnusableCase as error:
            unusable.append((name, str(error)))
    results = [_unusable_result(unusable)] if unusable else []
    if not playable:
        if not results:
            return [LevelResult(level="cases", mode="proposed (none to run)", passed=True)]
        return results
    # Divergences name a case by its episode's index, which is its place in `playable`.
    names = [name for name, _ in playable]
    unheld = Unheld("cases", spec.levels.unheld_ceiling, what="proposed start states")
    held = held_starts(worker, [p for _, p in playable])
    unheld.count(np.asarray(held, dtype=bool), len(held))
    kept = [p for (_, p), holds in zip(playable, held, strict=True) if holds]
    level = _compared(spec, worker, kept, replay, names)
    unheld.report(level)
    return [level, *results]


def _compared(
    spec: PortSpec, worker: Requester, kept: list[Played], replay: Replay, names: list[str]
) -> LevelResult:
    if not kept:
        return LevelResult(level="cases", mode="proposed", passed=True)
    played = Played.join(kept)
    result = worker.request(l3.free_request(played))
    options = L3Options(episodes=len(played), steps=MAX_ACTIONS, mode="free")
    level = l3.judge(spec, played, result, "free", options, replay)
    level.level, level.mode = "cases", "proposed"
    for divergence in level.divergences:
        divergence.level = "cases"
        divergence.message = f"proposed case {names[divergence.episode or 0]}"
    return level
