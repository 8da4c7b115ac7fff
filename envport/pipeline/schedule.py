"""Which checks a step runs, and the regression guard's re-checks.

After an edit the step's own scope is checked (the module, or the whole port), then every
earlier module whose check passed before and that the edit could change is checked again:
a failure there is a regression, and `decide` reverts the edit. Each check's report is
recorded as it comes.
"""

from __future__ import annotations

from collections.abc import Callable

from envport.io.profile import Profile
from envport.pipeline.checks import CheckCache, CheckRun, check_composed, check_module
from envport.pipeline.decision.verdict import summary
from envport.pipeline.recorder import Recorder
from envport.runs.layout import RunDir
from envport.runs.state import RunState
from envport.targets.registry import target
from envport.verifiers.reporting.watch import narrate


def affected(state: RunState, module_index: int, touched: set[str]) -> bool:
    """Could an edit of `touched` change the result of module `module_index`'s checks?"""
    positions = {target(state.target).file_of(m.name): i for i, m in enumerate(state.modules)}
    for path in touched:
        position = positions.get(path)
        # A helper file the spec does not name may be imported by anything.
        if position is None or position <= module_index:
            return True
    return False


def guarded(state: RunState, touched: set[str]) -> list[str]:
    """Earlier modules to check again: their check passed before and the edit could change it."""
    names = []
    for index, module in enumerate(state.modules):
        if state.phase == "modules" and index >= state.module_index:
            break
        passed_before = any(o.passed for o in state.results.values() if o.scope == module.name)
        if passed_before and affected(state, index, touched):
            names.append(module.name)
    return names


class Checker:
    def __init__(self, run: RunDir, recorder: Recorder, note: Callable[[str], None]) -> None:
        self.run = run
        self.recorder = recorder
        self.note = note
        self.cache = CheckCache(run.cache / "checks")

    def composed(self, state: RunState) -> CheckRun:
        self.note("checking the whole port")
        root, port = self.run.root, self.run.port
        timed = tuple(state.optimize.batch_sizes) if state.optimize.rounds else ()
        # Minutes for a big env: each of its checks is an event as it starts and ends.
        watched = narrate(Profile(), self.note, "whole port: ")
        return self._recorded(
            state,
            check_composed(root, port, state.target, self.cache, state.strict, timed, watched),
        )

    def module(self, state: RunState, name: str) -> CheckRun:
        root, port = self.run.root, self.run.port
        return self._recorded(state, check_module(root, port, state.target, name, self.cache))

    def after_edit(self, state: RunState, touched: set[str]) -> list[CheckRun]:
        """The scope's checks first, then the regression guard's."""
        if state.phase == "modules":
            self.note(f"checking module {state.scope}")
            runs = [self.module(state, state.scope)]
        else:
            runs = [self.composed(state)]
        for name in guarded(state, touched):
            self.note(f"re-checking module {name} (regression guard)")
            runs.append(self.module(state, name))
        return runs

    def _recorded(self, state: RunState, run: CheckRun) -> CheckRun:
        self.recorder.check(state.step, run)
        self.note(summary(run.outcomes))
        return run
