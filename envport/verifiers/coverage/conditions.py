"""Condition coverage of the reference's decisions: which conditions the run saw decide.

Branch coverage counts the ways an `if` went, so `if a or b:` is covered by a alone true
and both false: b is never seen deciding. And in an `if`/`elif` chain whose tests can hold
together, which body runs depends on the order of the tests: a MinAtar Breakout port
that tests the paddle's corner before its top differs only where the ball slides down a
side wall onto the paddle, while every branch exit is taken (36 of 36). So while the levels
run, the reference's steps are measured by their decisions (decisions.py): a boolean
decision's conditions each seen deciding the outcome alone, true once and false once, the
other conditions masking nothing (masking MC/DC); a chain's pairs of tests seen true together.

A condition is evaluated on the reference's frame, so the measure cannot share the branch
measure's tracer (coverage.py's, in C): each measured step is taken a second time, by a
copy of the reference env made just before the real step, under a tracer of its own that
evaluates the conditions at each decision's line (`twin`, called by
`envport.targets.reference.Reference.step` through `rule_trace`). The real env is never
touched: the copy shares only its generators, whose states are restored after. The first
STEPS steps are measured, then every second, fourth... (half as many per doubling of the
run's steps), MOST at most (none after STEPS that met no decision at all, as chess's
python-chess calls): the cost grows with the log of the run and is capped. A copy's cost is
the objects it copies, so the measure also stops once its copies have made COPIED objects:
Gymnasium's Taxi carries its whole transition table (3,500 lists copied a step, 22,000
objects walked), and 5,644 measured steps took 38 s of a 39 s verify. Counted in objects,
not seconds, a run measures the same steps on a loaded machine as on a quiet one.
l3.explore starts the count again, to steer toward combinations still missed. Once every
decision is met and shown in full, no step is measured.
"""

from __future__ import annotations

import copy
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import gymnasium
import numpy as np

from envport.targets import rule_trace
from envport.verifiers.coverage.branches import shown_name
from envport.verifiers.coverage.decisions import Decision, decisions
from envport.verifiers.reporting.branch_report import ConditionCoverage

# Steps measured in full before the measure thins out (see above).
STEPS = 1000
# At most this many measured steps per run (and as many more for l3.explore): a step of a
# slow reference (chess's) costs milliseconds, its copy a millisecond more.
MOST = 3000
# At most this many objects copied per run (and as many more for l3.explore): the other
# examples copy 13 (CartPole) to 101 (FrozenLake) objects a step, never reaching it in
# MOST steps; Taxi's table reaches it after about 290.
COPIED = 1_000_000
# Missed combinations a report lists one by one.
SHOWN = 12

Values = tuple[bool | None, ...]


class ConditionMeasure:
    def __init__(self, found: list[Decision]) -> None:
        self.by_file: dict[str, dict[int, list[Decision]]] = {}
        for decision in found:
            self.by_file.setdefault(decision.file, {}).setdefault(decision.line, []).append(
                decision
            )
        self.decisions = found
        self.seen: dict[str, set[Values]] = {}
        self.calls = self.measured = 0
        self.copied = 0
        self.copy_limit = COPIED
        self.limit = MOST
        self.seconds = 0.0
        self.broken: str | None = None
        self._lines: dict[str, dict[int, list[Decision]] | None] = {}
        self._complete: bool | None = None
        self._shown: set[str] | None = None

    @classmethod
    def of(cls, files: list[str]) -> ConditionMeasure | None:
        found = [d for file in files for d in decisions(file, Path(file).read_text("utf-8"))]
        return cls(found) if found else None

    def install(self) -> None:
        rule_trace.install_twin(self.twin)

    def uninstall(self) -> None:
        rule_trace.uninstall_twin()

    def restart(self) -> None:
        """Measure the steps from here on as a run of their own: the first STEPS each, then
        thinning, MOST at most (l3.explore steers by what its own rollouts show)."""
        self.calls = 0
        self.limit = self.measured + MOST
        self.copy_limit = self.copied + COPIED

    def wanted(self) -> bool:
        if self.complete() or self.measured >= self.limit or self.copied >= self.copy_limit:
            return False  # every decision shown in full, or the run's measure spent
        if self.measured >= STEPS and not self.seen:
            return False  # STEPS steps met no decision of more than one condition: none will
        self.calls += 1
        if self.calls <= STEPS:
            return True
        stride = 1 << (self.calls // STEPS).bit_length()
        return self.calls % stride == 0

    def complete(self) -> bool:
        if self._complete is None:  # recounted only after a new combination was seen
            self._complete = len(self.seen) == len(self.decisions) and self.covered() == sum(
                len(_items(d)) for d in self.decisions
            )
        return self._complete

    def twin(self, env: Any, step: Callable[[Any, Any], Any], action: Any) -> None:
        """Take the step about to be taken on a deep copy of `env`, measured."""
        if self.broken is not None or not self.wanted():
            return
        started = time.perf_counter()
        shared = _shared(env)
        generators = [g for g in shared if isinstance(g, _GENERATORS)]
        saved = [_state_of(g) for g in generators]
        memo = {id(thing): thing for thing in shared}
        try:
            twin = copy.deepcopy(env, memo)
        except Exception as error:  # an env that cannot be copied is not measured
            self.broken = f"the reference env cannot be copied ({type(error).__name__})"
            return
        self.copied += len(memo) - len(shared)  # deepcopy's memo: every object it copied
        previous = sys.gettrace()
        sys.settrace(self._call)
        try:
            step(twin, action)
        except Exception:
            pass  # the real step raises it again, where the levels judge it
        finally:
            sys.settrace(previous)
            # The twin drew from the real generators: they go back to where they were.
            for generator, state in zip(generators, saved, strict=True):
                _restore(generator, state)
        self.measured += 1
        self.seconds += time.perf_counter() - started

    def _call(self, frame: FrameType, event: str, arg: Any) -> Any:
        if event != "call":
            return None
        name = frame.f_code.co_filename
        if name not in self._lines:
            self._lines[name] = self.by_file.get(str(Path(name).resolve()))
        return self._line if self._lines[name] is not None else None

    def _line(self, frame: FrameType, event: str, arg: Any) -> Any:
        if event == "line":
            lines = self._lines.get(frame.f_code.co_filename)
            here = lines.get(frame.f_lineno) if lines else None
            for decision in here or ():
                values = tuple(_value(code, frame) for code in decision.codes)
                seen = self.seen.setdefault(decision.key, set())
                if values not in seen:
                    seen.add(values)
                    self._complete = self._shown = None
        return self._line

    def covered(self) -> int:
        """Conditions and pairs shown so far (the exploration's measure of novelty)."""
        return len(self.shown())

    def shown(self) -> set[str]:
        """Each condition or pair shown so far, in words (recounted after a new combination)."""
        if self._shown is None:
            self._shown = {
                _item_text(d, item)
                for d in self.decisions
                if d.key in self.seen
                for item in _shown(d, self.seen[d.key])
            }
        return self._shown

    def analyse(self) -> ConditionCoverage:
        result = ConditionCoverage(steps=self.measured, seconds=self.seconds, broken=self.broken)
        for decision in self.decisions:
            seen = self.seen.get(decision.key)
            if not seen:
                continue  # a decision the run never met is the branch measure's to name
            items = _items(decision)
            shown = _shown(decision, seen)
            result.decisions += 1
            result.total += len(items)
            result.covered += len(shown)
            where = f"{shown_name(decision.file)}:{decision.line}"
            for item in items:
                if item not in shown:
                    result.missed.append(f"{where} {_missed_text(decision, item)}")
        return result


# Shared by the twin, not copied: generators (copying a RandomState costs more than the
# measured step; the twin draws from the real one, whose state is then restored), and what
# a step does not change (spaces, the registration spec).
_GENERATORS = (np.random.RandomState, np.random.Generator)
_SHARED = (*_GENERATORS, gymnasium.spaces.Space, gymnasium.envs.registration.EnvSpec)
_PLAIN = (int, float, str, bool, bytes, np.ndarray, np.generic, type(None))
# How deep below the env the shared objects are looked for (wrappers, the game, its env).
_DEPTH = 6


def _shared(env: Any) -> list[Any]:
    found: list[Any] = []
    seen: set[int] = set()

    def walk(thing: Any, depth: int) -> None:
        if id(thing) in seen or depth < 0:
            return
        seen.add(id(thing))
        if isinstance(thing, _SHARED):
            found.append(thing)
            return
        for value in getattr(thing, "__dict__", {}).values():
            if not isinstance(value, _PLAIN):
                walk(value, depth - 1)

    walk(env, _DEPTH)
    return found


def _state_of(generator: Any) -> Any:
    if isinstance(generator, np.random.RandomState):
        return generator.get_state()
    return generator.bit_generator.state


def _restore(generator: Any, state: Any) -> None:
    if isinstance(generator, np.random.RandomState):
        generator.set_state(state)
    else:
        generator.bit_generator.state = state


def _value(code: Any, frame: FrameType) -> bool | None:
    try:
        return bool(
            eval(code, frame.f_globals, frame.f_locals)
        )  # only pure conditions (decisions.py)
    except Exception:
        return None  # an error, or an array with no one truth value


def _items(decision: Decision) -> list[Any]:
    """What is to be shown: a chain's pairs, a boolean decision's conditions; none on a
    setting (fixed for the run)."""
    fixed = set(decision.settings)
    if decision.kind == "chain":
        return [pair for pair in decision.pairs if not fixed & set(pair)]
    return [index for index in range(len(decision.conditions)) if index not in fixed]


def _shown(decision: Decision, seen: set[Values]) -> set[Any]:
    if decision.kind == "chain":
        return {(i, j) for i, j in _items(decision) if any(v[i] and v[j] for v in seen)}
    shape = decision.shape
    shown = set()
    for index in _items(decision):
        deciding = [v for v in seen if v[index] is not None and _decides(shape, v, index)]
        outcomes = {(v[index], _outcome(shape, v)) for v in deciding}
        if {(True, True), (False, False)} <= outcomes or {(True, False), (False, True)} <= outcomes:
            shown.add(index)
    return shown


def _outcome(shape: Any, values: Values) -> bool | None:
    """The decision's value on `values`, three-valued (None: unknown)."""
    if isinstance(shape, int):
        return values[shape]
    word, children = shape
    parts = [_outcome(child, values) for child in children]
    if word == "and":
        return False if False in parts else (True if all(p is True for p in parts) else None)
    return True if True in parts else (False if all(p is False for p in parts) else None)


def _decides(shape: Any, values: Values, index: int) -> bool:
    """Whether condition `index` alone decides the outcome here (the others masking none)."""
    on = _outcome(shape, (*values[:index], True, *values[index + 1 :]))
    off = _outcome(shape, (*values[:index], False, *values[index + 1 :]))
    return on is not None and off is not None and on != off


def _missed_text(decision: Decision, item: Any) -> str:
    if decision.kind == "chain":
        i, j = item
        return (
            f"`{decision.conditions[i]}` and `{decision.conditions[j]}` never true together "
            "(their order in the `if`/`elif` chain decides which body runs)"
        )
    return f"`{decision.conditions[item]}` never seen deciding `{decision.source}` alone"


def _item_text(decision: Decision, item: Any) -> str:
    """A condition or pair shown, in words: what l3.explore says a rollout reached."""
    where = f"{shown_name(decision.file)}:{decision.line}"
    if decision.kind == "chain":
        i, j = item
        return f"`{decision.conditions[i]}` and `{decision.conditions[j]}` true together ({where})"
    return f"`{decision.conditions[item]}` deciding `{decision.source}` alone ({where})"
