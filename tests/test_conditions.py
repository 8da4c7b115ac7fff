"""Condition coverage (envport/verifiers/coverage/conditions.py) on a small reference of our
own: a boolean decision's conditions each seen deciding alone, an `if`/`elif` chain's tests
seen true together, measured on a copy of the env (the real one left as it was); a condition
on a setting (an attribute only `__init__` assigns) is not counted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from envport.verifiers.coverage.conditions import ConditionMeasure

SOURCE = """
import numpy as np


class Env:
    def __init__(self):
        self.x, self.y, self.moved = 0, 0, 0
        self.fast = True
        self.random = np.random.RandomState(0)

    def place(self, x, y):
        self.x, self.y = x, y

    def step(self, action):
        self.moved += 1
        self.random.random_sample()
        if self.x > 0 and self.y > 0 and self.fast:
            result = "both"
        else:
            result = "not both"
        if self.x == action:
            kind = "top"
        elif self.y == action:
            kind = "corner"
        elif self.x == 5:
            kind = "far"
        return result
"""


def _toy(tmp_path: Path) -> tuple[ConditionMeasure, Any]:
    """The toy reference written to a file, its measure, and a fresh env of it."""
    file = tmp_path / "toy_env.py"
    file.write_text(SOURCE)
    namespace: dict[str, Any] = {}
    exec(compile(SOURCE, str(file), "exec"), namespace)
    measure = ConditionMeasure.of([str(file)])
    assert measure is not None
    return measure, namespace["Env"]()


def _measured(tmp_path: Path, steps: list[tuple[int, int, int]]) -> tuple[ConditionMeasure, Any]:
    measure, env = _toy(tmp_path)
    for x, y, action in steps:
        env.place(x, y)
        measure.twin(env, lambda e, a: e.step(a), action)
    return measure, env


def test_a_condition_never_seen_deciding_alone_is_named(tmp_path: Path) -> None:
    # x > 0 decides alone (1, 1) against (0, 1); y > 0 is never false while x > 0 holds.
    measure, env = _measured(tmp_path, [(1, 1, 9), (0, 1, 9)])
    missed = measure.analyse().missed
    decision = "`self.x > 0 and self.y > 0 and self.fast`"
    assert any(f"`self.y > 0` never seen deciding {decision} alone" in m for m in missed)
    # `self.fast`, a setting, is never false and never named.
    assert not any("`self.fast` never" in m for m in missed)
    assert not any("`self.x > 0` never" in m for m in missed)
    # The real env never stepped, and its generator is where it was.
    assert env.moved == 0
    assert env.random.random_sample() == np.random.RandomState(0).random_sample()


def test_a_chains_tests_never_true_together_are_named_until_they_are(tmp_path: Path) -> None:
    # Each test true on its own: every branch of the chain taken, never two tests at once.
    measure, _ = _measured(tmp_path, [(1, 2, 1), (1, 2, 2), (5, 2, 0), (1, 1, 3), (2, 1, 2)])
    report = measure.analyse()
    together = "`self.x == action` and `self.y == action` never true together"
    assert any(together in m for m in report.missed)
    # `self.x == action` and `self.x == 5` can hold together too; only x's two constants
    # would be exclusive, and they are not both constants here.
    assert report.total == 3 + 2  # three pairs, two conditions
    measure.twin(_env_at(measure, 3, 3), lambda e, a: e.step(a), 3)
    assert not any(together in m for m in measure.analyse().missed)


def _env_at(measure: ConditionMeasure, x: int, y: int) -> Any:
    file = measure.decisions[0].file
    namespace: dict[str, Any] = {}
    exec(compile(Path(file).read_text(), file, "exec"), namespace)
    env = namespace["Env"]()
    env.place(x, y)
    return env


def test_the_measure_stops_once_its_copies_have_made_its_share_of_objects(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """A reference carrying a large table (Gymnasium's Taxi: 3,500 lists a copy) is copied
    before every measured step: the measure counts the objects its copies made and stops at
    its budget, counted in objects, so a loaded machine measures the same steps."""
    from envport.verifiers.coverage import conditions

    monkeypatch.setattr(conditions, "COPIED", 10_000)
    measure, env = _toy(tmp_path)
    env.table = [[index] for index in range(999)]  # 1,000 objects a copy, with the env's
    for action in range(50):
        measure.twin(env, lambda e, a: e.step(a), action)
    assert measure.measured == 10
    measure.restart()  # l3.explore's own share
    for action in range(50):
        measure.twin(env, lambda e, a: e.step(a), action)
    assert measure.measured == 20
