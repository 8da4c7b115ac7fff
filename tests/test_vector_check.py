"""l2.vector: a NumPy port's VectorEnv against Gymnasium's SyncVectorEnv of the reference.

Known-good ports pass with every batch size, autoresets after termination and truncation,
partial and full resets; each wrong autoreset or partial reset of the examples' mutant
lists fails, at the env and step where it shows.
"""

from __future__ import annotations

import functools
import shutil
from pathlib import Path

import numpy as np
import pytest

from envport.spec import PortSpec, load_spec
from envport.targets.reference import Reference
from envport.verifiers.reporting.divergence import LevelResult
from envport.verifiers.selfcheck import apply_mutant, load_mutants
from envport.verifiers.stats import reset_sample
from envport.verifiers.vector import check as vector_check
from envport.verifiers.vector.reference import VectorReference

from helpers import ROOT, started_worker

EXAMPLES = ROOT / "examples"


@functools.cache
def reference_draws(name: str) -> tuple[PortSpec, reset_sample.ResetSample]:
    spec = load_spec(EXAMPLES / name)
    return spec, reset_sample.draw(spec, Reference(spec), seed=0)


def check(name: str, port: Path, example: Path | None = None) -> LevelResult:
    spec, sample = reference_draws(name)
    with started_worker(example or EXAMPLES / name, port, "numpy") as worker:
        return vector_check.check_vector(spec, worker, sample, 0, "replay")


def test_the_reference_side_is_gymnasiums_own_next_step_autoreset() -> None:
    spec = load_spec(EXAMPLES / "cartpole")
    vector = VectorReference(spec, 3)
    vector.reset(seed=0)
    state = vector.read(1)
    state["physics"] = np.array([0.0, 0.0, 0.5, 0.0])  # past the angle limit: ends at once
    vector.write(1, state)
    _, reward, terminated, _, noise = vector.step(np.array([1, 1, 1]))
    assert noise is None and terminated.tolist() == [False, True, False]
    assert vector.pending.tolist() == [False, True, False]
    obs, reward, terminated, truncated, _ = vector.step(np.array([1, 1, 1]))
    # Env 1 reset by Gymnasium: reward 0, not ended, a reset observation.
    assert reward[1] == 0.0 and not terminated[1] and not truncated[1]
    assert np.all(np.abs(obs[1]) <= 0.05) and vector.read(1)["elapsed_steps"] == 0
    vector.reset(seed=5, mask=np.array([False, False, True]))
    assert not vector.pending.any()


@pytest.mark.slow
@pytest.mark.parametrize("name", ["cartpole", "frozenlake", "pendulum", "taxi"])
def test_known_good_vector_envs_behave_like_sync_vector_env(name: str) -> None:
    level = check(name, EXAMPLES / name / "ports" / "numpy")
    assert level.passed, [d.text() for d in level.divergences]
    assert level.name == "l2.vector" and level.steps_compared > 3000
    assert "5 partial and 5 full resets" in level.note
    # Envs end at different steps, by time limit (late starts) and, where the env has
    # termination, by it too.
    assert level.endings["truncated"] >= 10
    if name in ("cartpole", "frozenlake"):
        assert level.endings["terminated"] >= 50
    autoresets = int(level.note.split(" autoresets")[0].rsplit(" ", 1)[1])
    assert autoresets >= 20
    # The resets the port made, tested as a sample too.
    assert level.statistics and all(
        v["p_value"] is None or v["p_value"] > 0 for v in level.statistics.values()
    )


VECTOR_MUTANTS = [
    ("cartpole", "numpy-autoreset-no-reset", "the autoreset gave a state no reference reset gives"),
    ("cartpole", "numpy-autoreset-terminal-obs", "the autoreset gave a state no reference"),
    ("cartpole", "numpy-reset-keeps-pending", "the step differs"),
    ("pendulum", "numpy-autoreset-counter", "gave a state no reference reset gives"),
    ("taxi", "numpy-partial-reset-all", "a partial reset changed an env outside its mask"),
    (
        "mountaincar",
        "numpy-partial-reset-takes-pending",
        "a partial reset changed an env outside its mask",
    ),
    ("frozenlake", "numpy-autoreset-terminal-obs", "the autoreset gave a state no reference"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "mutant_id", "message"), VECTOR_MUTANTS)
def test_a_wrong_autoreset_or_partial_reset_is_caught(
    name: str, mutant_id: str, message: str, tmp_path: Path
) -> None:
    mutant = next(m for m in load_mutants(EXAMPLES / name) if m.id == mutant_id)
    port = apply_mutant(mutant, EXAMPLES / name / "ports" / "numpy", tmp_path / "numpy")
    level = check(name, port)
    assert not level.passed
    divergence = level.divergences[0]
    assert message in divergence.message, divergence.text()
    assert divergence.start_state["batch"] in vector_check.BATCHES
    assert divergence.step is not None and divergence.fields and divergence.replay


@pytest.mark.slow
def test_the_step_counter_not_reset_is_named(tmp_path: Path) -> None:
    mutant = next(
        m for m in load_mutants(EXAMPLES / "pendulum") if m.id == "numpy-autoreset-counter"
    )
    port = apply_mutant(mutant, EXAMPLES / "pendulum" / "ports" / "numpy", tmp_path / "numpy")
    field = check("pendulum", port).divergences[0].fields[0]
    assert field.field == "state.elapsed_steps" and field.expected == "0" and field.actual > 0


def _without(port: Path, tmp_path: Path, old: str, new: str) -> Path:
    copy = tmp_path / "numpy"
    apply_mutant(
        type(load_mutants(EXAMPLES / "cartpole")[0])(
            id="edit", target="numpy", file="env.py", old=old, new=new, what=""
        ),
        port,
        copy,
    )
    return copy


@pytest.mark.slow
def test_a_port_without_reset_options_is_checked_without_partial_resets(tmp_path: Path) -> None:
    port = _without(
        EXAMPLES / "cartpole" / "ports" / "numpy",
        tmp_path,
        "def reset(self, seed=None, options=None):",
        "def reset(self, seed=None):\n        options = None",
    )
    level = check("cartpole", port)
    assert level.passed, [d.text() for d in level.divergences]
    assert "0 partial" in level.note and "partial resets not checked" in level.note


@pytest.mark.slow
def test_a_port_without_state_to_reference_is_resynchronised_and_still_judged(
    tmp_path: Path,
) -> None:
    port = _without(
        EXAMPLES / "frozenlake" / "ports" / "numpy",
        tmp_path,
        "def state_to_reference(state):",
        "def _unused_state_to_reference(state):",
    )
    # The bridge is optional in the contract: a spec that does not list it.
    example = tmp_path / "frozenlake"
    shutil.copytree(EXAMPLES / "frozenlake", example, ignore=shutil.ignore_patterns("ports"))
    spec = example / "envport.toml"
    listed = 'exports = ["VectorEnv", "state_from_reference", "state_to_reference"]'
    assert listed in spec.read_text()
    spec.write_text(
        spec.read_text().replace(listed, 'exports = ["VectorEnv", "state_from_reference"]')
    )
    level = check("frozenlake", port, example)
    assert level.passed, [d.text() for d in level.divergences]
    assert "states after resets not checked" in level.note
    assert level.steps_compared > 1000
    # And a wrong autoreset observation is still caught from the observation alone.
    mutant = next(
        m for m in load_mutants(EXAMPLES / "frozenlake") if m.id == "numpy-autoreset-terminal-obs"
    )
    broken = apply_mutant(mutant, port, tmp_path / "broken")
    assert not check("frozenlake", broken, example).passed


@pytest.mark.slow
def test_a_reset_the_reference_cannot_step_from_is_a_divergence_not_a_crash(
    tmp_path: Path,
) -> None:
    # Taxi's destination pushed past its four codes: the state code stays inside the range
    # of the reference's resets, and the reference, following the port, fails on it.
    port = shutil.copytree(EXAMPLES / "taxi" / "ports" / "numpy", tmp_path / "numpy")
    env = port / "env.py"
    text = env.read_text()
    old = "destination = (passenger + self.rng.integers(1, 4, size=count)) % 4"
    assert text.count(old) == 1
    env.write_text(text.replace(old, old.replace("% 4", "+ 4")))
    level = check("taxi", port)
    assert not level.passed
    assert "the reference cannot step from the states" in level.divergences[0].message
