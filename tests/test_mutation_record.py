"""benchmarks/mutation_check.py keeps each example's record apart: a check of one example
(or of one target) once replaced CartPole's recorded results with Blackjack's. A check of
some mutants (`--mutants GLOB`) has a record of its own."""

from __future__ import annotations

import importlib.util
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
    # Nor are a few of its mutants, picked by id.
    picked = record_path(Path("examples/crafter"), ("numpy",), "numpy-worldgen-*")
    assert picked == results / "mutants_crafter_numpy_numpy-worldgen.json"
    assert record_path(Path("examples/cartpole"), None, "jax-*") != results / "mutants.json"
    # A negated class is not the ids it leaves out: every JAX mutant but the generator's.
    not_worldgen = record_path(Path("examples/crafter"), ("jax",), "jax-[!w]*")
    assert not_worldgen == results / "mutants_crafter_jax_jax-not-w.json"


def test_a_glob_matching_no_mutant_is_an_error() -> None:
    with pytest.raises(ValueError, match="no mutant of cartpole has an id matching 'nope-\\*'"):
        run_selfcheck(ROOT / "examples" / "cartpole", only="nope-*")
