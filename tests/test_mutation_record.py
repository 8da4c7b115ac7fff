"""benchmarks/mutation_check.py keeps each example's record apart: a check of one example
(or of one target) once replaced CartPole's recorded results with Blackjack's. A check of
some mutants (`--mutant`) is no example's record at all."""

from __future__ import annotations

import importlib.util
import sys
import types
from collections.abc import Callable
from pathlib import Path

import pytest

from envport.verifiers.selfcheck import run_selfcheck

from helpers import ROOT


def _script() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(
        "mutation_check", ROOT / "benchmarks" / "mutation_check.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _record_path() -> Callable[..., Path]:
    record_path: Callable[..., Path] = _script().record_path
    return record_path


def test_each_examples_check_has_a_record_of_its_own() -> None:
    record_path = _record_path()
    results = ROOT / "benchmarks" / "results"
    assert record_path(Path("examples/cartpole"), None) == results / "mutants.json"
    assert record_path(Path("examples/blackjack"), None) == results / "mutants_blackjack.json"
    assert record_path(Path("examples/chess"), ("numpy",)) == results / "mutants_chess_numpy.json"
    # CartPole's one target is not its whole check.
    assert record_path(Path("examples/cartpole"), ("jax",)) != results / "mutants.json"


def test_a_check_of_some_mutants_goes_only_where_it_is_told(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Without --json its results would replace the example's record: refused before any run.
    crafter = str(ROOT / "examples" / "crafter")
    argv = ["mutation_check.py", crafter, "--mutant", "jax-worldgen-coal-one-in-five"]
    monkeypatch.setattr(sys, "argv", argv)
    assert _script().main() == 2
    # A mistyped id is named, not read as "no mutants, none missed".
    with pytest.raises(ValueError, match="no mutant jax-worldgen-coal-one-in-4"):
        run_selfcheck(Path(crafter), ids=["jax-worldgen-coal-one-in-4"])
