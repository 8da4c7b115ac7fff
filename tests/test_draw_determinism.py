"""A check's draws depend on its seed, not on what else the process loaded.

Hypothesis harvests constants from the source of every local module loaded in the process
and now and then draws one. Before envport turned that off for its checks, L2 run after L1
(more modules loaded) drew other inputs than L2 alone, so a divergence's replay command did
not reproduce it. Here: draw with the real L1 and L2 checks on CartPole against the real
NumPy port, import a module full of in-bounds constants, draw again; the draws must match.
"""

from __future__ import annotations

import importlib
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis.internal.conjecture import providers

from envport.serve.ops import Op
from envport.spec import load_spec
from envport.targets.reference import Reference
from envport.verifiers.levels.l1.properties import Example, L1Run, drive
from envport.verifiers.levels.l2 import interaction as l2

from helpers import CARTPOLE, NUMPY_PORT, started_worker

EXAMPLES = 60


class Tap:
    """The real worker, with every request it is sent written down (what L2 drew)."""

    def __init__(self, worker: Any) -> None:
        self.worker = worker
        self.sent: list[bytes] = []

    def request(self, op: Op, timeout: float | None = None) -> Any:
        self.sent.append(pickle.dumps((op.op, op.args())))
        return self.worker.request(op, timeout)


def l1_draws(run: L1Run) -> list[bytes]:
    drawn: list[bytes] = []

    def record(examples: list[Example], first: int) -> None:
        drawn.extend(pickle.dumps((e.before, np.asarray(e.action))) for e in examples)

    run.drawn = None  # drawn afresh, not the last call's
    assert drive(run, record, "step", None).passed
    return drawn


def l2_draws(spec: Any, reference: Reference, worker: Any) -> list[bytes]:
    tap = Tap(worker)
    result = l2.check_interaction(spec, reference, tap, "numpy", EXAMPLES, "replay", shrink=False)
    assert result.passed, result.divergences
    return tap.sent


def constants_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Import a local module whose source holds hundreds of constants that CartPole's draws
    allow: floats inside its state bounds and step counts from 100 to 499."""
    rng = np.random.default_rng(17)
    floats = ", ".join(repr(float(x)) for x in rng.uniform(-2.4, 2.4, 300))
    ints = ", ".join(str(n) for n in range(101, 500, 7))
    name = "envport_test_distinctive_constants"
    (tmp_path / f"{name}.py").write_text(f"FLOATS = [{floats}]\nINTS = [{ints}]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(__import__("sys").modules, name, raising=False)
    importlib.import_module(name)


def test_draws_do_not_change_when_the_process_loads_more_modules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = load_spec(CARTPOLE)
    reference = Reference(spec)
    with started_worker(CARTPOLE, NUMPY_PORT, "numpy") as worker:
        run = L1Run(spec, reference, worker, "numpy", EXAMPLES, seed=3, replay=None)  # type: ignore[arg-type]
        before = (l1_draws(run), l2_draws(spec, reference, worker))
        constants_module(tmp_path, monkeypatch)
        after = (l1_draws(run), l2_draws(spec, reference, worker))
    assert len(before[0]) == EXAMPLES and before[1]
    assert before[0] == after[0], "L1 drew other states once more modules were loaded"
    assert before[1] == after[1], "L2 drew other sequences once more modules were loaded"
    # Other Hypothesis users in the process keep Hypothesis's own behaviour.
    assert providers._get_local_constants.__module__ == providers.__name__
