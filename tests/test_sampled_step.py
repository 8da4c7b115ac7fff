"""l1.sampled_step: a stochastic port's own `step` (what users call), not only the
`step_given_noise` the harness feeds with the reference's draws.

FrozenLake is the stochastic example. Its known-good ports compose sample_noise with
step_given_noise and pass; a step that never slips, draws from a constant key, or from
numpy's global generator passed every check before this one.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from envport.spec import load_spec
from envport.targets.reference import Reference
from envport.verifiers.levels.l1 import sampled_step
from envport.verifiers.reporting.divergence import LevelResult
from envport.verifiers.selfcheck import apply_mutant, load_mutants
from envport.verifiers.verify import VerifyOptions, verify

from helpers import ROOT, started_worker

FROZENLAKE = ROOT / "examples" / "frozenlake"


def check(port: Path, target: str) -> LevelResult:
    spec = load_spec(FROZENLAKE)
    with started_worker(FROZENLAKE, port, target) as worker:
        return sampled_step.check_sampled_step(
            spec, Reference(spec), worker, target, 0, "replay", "env"
        )


def mutated(mutant_id: str, tmp_path: Path) -> tuple[Path, str]:
    mutant = next(m for m in load_mutants(FROZENLAKE) if m.id == mutant_id)
    return apply_mutant(mutant, FROZENLAKE / "ports" / mutant.target, tmp_path / "p"), mutant.target


def test_each_row_steps_a_fresh_env_drawing_on_one_seeded_stream() -> None:
    # FrozenLake's slippery step draws one uniform number (categorical_sample) and its
    # reset one more. Each row's step must take the next number of the one stream seeded
    # for the check, none skipped for the fresh env's reset (before, an unseeded reset drew
    # from the stream between the rows), and the rows must not replay one draw.
    spec = load_spec(FROZENLAKE)
    reference = Reference(spec)
    reference.reset(0)
    state, action, rows, seed = reference.read_state(), 1, 60, 3
    outcomes = sampled_step._reference_outcomes(reference, [state] * rows, [action] * rows, seed)
    moves = reference.env.unwrapped.P[int(state["s"])][action]
    stream = np.random.default_rng(seed * 100_003 + sampled_step.STREAM_OFFSET)
    cumulative = np.cumsum([p for p, *_ in moves])
    expected = [moves[int(np.argmax(cumulative > stream.random()))][1] for _ in range(rows)]
    assert outcomes["obs"].tolist() == expected
    assert len(set(expected)) == 3


@pytest.mark.slow
@pytest.mark.parametrize("target", ["numpy", "jax"])
def test_known_good_steps_compose_and_sample_like_the_reference(target: str) -> None:
    level = check(FROZENLAKE / "ports" / target, target)
    assert level.passed, [d.text() for d in level.divergences]
    assert level.name == "l1.sampled_step" and "step composes" in level.note
    # The spec's design (shift 0.05, alpha 0.01, power 0.95) sets n, as for l1.noise.
    assert level.steps_compared > 3000
    outcome = level.statistics["obs"]
    assert outcome["test"] == "chi-square" and outcome["p_value"] > outcome["alpha"] / 2
    assert level.statistics["terminated"]["kind"] == "discrete"


@pytest.mark.slow
@pytest.mark.parametrize("mutant_id", ["numpy-step-never-slips", "jax-step-never-slips"])
def test_a_step_that_never_slips_fails_both_ways(mutant_id: str, tmp_path: Path) -> None:
    level = check(*mutated(mutant_id, tmp_path))
    assert not level.passed
    composition, *distribution = level.divergences
    assert "differs from step_given_noise" in composition.message
    assert composition.start_state and "action" in composition.start_state
    # Without the composition check the outcome's distribution alone gives it away.
    assert any("from another distribution" in d.message for d in distribution)
    assert "obs" in {f.field for d in distribution for f in d.fields}


@pytest.mark.slow
@pytest.mark.parametrize("mutant_id", ["jax-step-fixed-key", "numpy-step-global-rng"])
def test_a_step_drawing_its_own_way_breaks_the_composition(mutant_id: str, tmp_path: Path) -> None:
    level = check(*mutated(mutant_id, tmp_path))
    assert not level.passed
    assert "the contract's identity" in level.divergences[0].message
    assert "does not compose" in level.note


@pytest.mark.slow
def test_in_verify_it_runs_beside_the_sampler_check_and_replays(tmp_path: Path) -> None:
    port, target = mutated("numpy-step-never-slips", tmp_path)
    options = VerifyOptions(target=target, levels=("l1",), examples=10, shrink=False)
    report = verify(str(FROZENLAKE), str(port), options)
    failed = {level.name for level in report.levels if not level.passed}
    # The sampler itself is right: only the step users call is wrong.
    assert failed == {"l1.sampled_step"}, report.text()
    divergence = next(lv for lv in report.levels if lv.name == "l1.sampled_step").divergences[0]
    assert "--levels l1" in divergence.replay and divergence.replay.endswith("--module env")
