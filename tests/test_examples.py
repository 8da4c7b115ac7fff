"""The new examples: every known-good port verifies L1-L3, and chosen mutants are caught.

Budgets are cut (fewer hypothesis examples and L3 episodes than the specs ask for) to keep
the suite fast; `envport verify examples/<name> --port examples/<name>/ports/<target>` runs
the full budgets.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from envport.spec import load_spec
from envport.verifiers.reporting.divergence import VerifyReport
from envport.verifiers.selfcheck import apply_mutant, load_mutants
from envport.verifiers.verify import VerifyOptions, verify

from helpers import ROOT

EXAMPLES = ("acrobot", "mountaincar", "pendulum", "taxi", "frozenlake")
FAST = {"examples": 40, "episodes": 20}


def example(name: str) -> Path:
    return ROOT / "examples" / name


def run(name: str, port: Path, target: str, **options: Any) -> VerifyReport:
    chosen = VerifyOptions(target=target, **{**FAST, **options})
    return verify(str(example(name)), str(port), chosen)


@pytest.mark.slow
@pytest.mark.parametrize("name", EXAMPLES)
def test_numpy_port_verifies(name: str) -> None:
    report = run(name, example(name) / "ports" / "numpy", "numpy")
    assert report.passed, report.text()
    assert {level.level for level in report.levels} == {"l1", "l2", "l3"}


@pytest.mark.slow
@pytest.mark.parametrize("name", EXAMPLES)
def test_jax_port_verifies(name: str) -> None:
    # Smaller still: JAX compiles every shape it meets, and that is most of its time here.
    report = run(name, example(name) / "ports" / "jax", "jax", examples=20, episodes=10)
    assert report.passed, report.text()
    assert report.backend == "jax"
    if name == "acrobot":
        # Chaotic: free-running is compared up to the spec's horizon, resync throughout.
        free = next(level for level in report.levels if level.name == "l3.free")
        resync = next(level for level in report.levels if level.name == "l3.resync")
        horizon = load_spec(example(name)).levels.l3.free_horizon
        assert horizon and free.steps_compared <= horizon * free.episodes
        assert resync.steps_compared > free.steps_compared


def test_specs_name_their_ports_modules_and_probes() -> None:
    for name in EXAMPLES:
        spec = load_spec(example(name))
        for target in ("jax", "numpy"):
            chosen = spec.target(target)
            assert chosen.probes and (example(name) / chosen.probes).is_file()
            for module in chosen.modules:
                path = example(name) / "ports" / target / f"{module.name}.py"
                assert path.is_file(), path
                # Known-good ports are test subjects and say so.
                assert "Hand-written known-good port" in path.read_text()


def test_mutant_edits_apply_exactly_once(tmp_path: Path) -> None:
    for name in EXAMPLES:
        mutants = load_mutants(example(name))
        assert len(mutants) >= 4, name
        for mutant in mutants:
            port = example(name) / "ports" / mutant.target
            mutated = apply_mutant(mutant, port, tmp_path / name / mutant.id)
            assert mutant.new in (mutated / mutant.file).read_text()


@pytest.mark.slow
@pytest.mark.parametrize("mutant_id", ["numpy-torque-clip", "jax-torque-clip"])
def test_a_wrong_torque_clip_is_caught_by_l1(mutant_id: str, tmp_path: Path) -> None:
    mutant = next(m for m in load_mutants(example("pendulum")) if m.id == mutant_id)
    port = apply_mutant(mutant, example("pendulum") / "ports" / mutant.target, tmp_path / "p")
    report = run("pendulum", port, mutant.target, levels=("l1",), examples=100, shrink=False)
    failed = [level for level in report.levels if not level.passed]
    assert failed and all(level.level == "l1" for level in failed), report.text()
    # The drawn torque is past the mutant's clip, and the divergence says so.
    divergence = failed[0].divergences[0]
    assert abs(divergence.start_state["action"][0]) > 1.0
    assert divergence.replay.startswith("envport verify")
