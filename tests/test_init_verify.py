"""Inferred specs judge ports as the hand-written ones do: for every example with a
known-good NumPy port, `envport verify` with the spec `envport init` wrote (no edits) passes
that port and fails its mutants that the hand-written spec fails (two per example here; every one in
benchmarks/init_mutants.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from init_specs import EXAMPLES, example_spec, numpy_port

from envport.verifiers.selfcheck import Mutant, apply_mutant, load_mutants

from helpers import ROOT, run_envport


def _mutants(name: str) -> list[Mutant]:
    # Non-equivalent NumPy mutants: the ones the hand-written spec fails.
    return [
        m
        for m in load_mutants(ROOT / "examples" / name)
        if m.target == "numpy" and not m.equivalent
    ]


def _default_tier_first(cases: list, first: str) -> list:
    """Every case, those not about `first` (CartPole) marked for the full tier only."""
    return [
        pytest.param(*case if isinstance(case, tuple) else (case,), marks=pytest.mark.slow)
        if (case[0] if isinstance(case, tuple) else case) != first
        else case
        for case in cases
    ]


@pytest.mark.parametrize("name", _default_tier_first(list(EXAMPLES), "cartpole"))
def test_inferred_spec_passes_the_known_good_port(
    name: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    spec = example_spec(name, tmp_path_factory)
    result = run_envport("verify", str(spec), "--port", str(numpy_port(name)))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr


FEW = [(name, m.id) for name in EXAMPLES for m in _mutants(name)[:2]]


@pytest.mark.parametrize(("name", "mutant"), _default_tier_first(FEW, "cartpole"))
def test_inferred_spec_fails_mutants(
    name: str, mutant: str, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    _fails(name, mutant, tmp_path_factory, tmp_path)


def _fails(
    name: str, mutant_id: str, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    spec = example_spec(name, tmp_path_factory)
    mutant = next(m for m in _mutants(name) if m.id == mutant_id)
    port = apply_mutant(mutant, numpy_port(name), tmp_path / mutant.id)
    result = run_envport("verify", str(spec), "--port", str(port))
    assert result.returncode == 1, f"{mutant.id} ({mutant.what}) passed:\n{result.stdout[-2000:]}"
