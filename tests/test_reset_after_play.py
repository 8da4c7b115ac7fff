"""l2.reset_after_play: a reset that follows an episode keeps what the reference keeps.

MinAtar's sticky-action wrapper keeps `last_action` across reset(); before this check no
level reset after play, so a port that starts every episode with last action 0 (pgx's
MinAtar, and our JAX ports, whose functional `reset(key)` cannot see the episode before)
passed. Real reference, real worker subprocess, real ports.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from envport.spec import load_spec
from envport.targets.reference import Reference
from envport.verifiers.levels.l2.reset_after import Played, check_reset_after_play
from envport.verifiers.reporting.divergence import LevelResult
from envport.verifiers.selfcheck import apply_mutant, load_mutants
from envport.verifiers.stats import reset_sample
from envport.verifiers.vector.check import check_vector

from helpers import ROOT, started_worker

EXAMPLES = ROOT / "examples"


def check(name: str, port: Path, target: str) -> LevelResult:
    spec = load_spec(EXAMPLES / name)
    with started_worker(EXAMPLES / name, port, target) as worker:
        return check_reset_after_play(spec, Reference(spec), worker, 0, "envport verify ...")


def mutated(name: str, mutant_id: str, tmp_path: Path) -> Path:
    mutant = next(m for m in load_mutants(EXAMPLES / name) if m.id == mutant_id)
    return apply_mutant(mutant, EXAMPLES / name / "ports" / mutant.target, tmp_path / mutant.id)


def test_what_the_reference_keeps_is_measured_not_declared() -> None:
    # MinAtar keeps the sticky action; Gymnasium's CartPole and MinAtar with sticky actions
    # off (no `last_action` bridged) keep nothing a seeded reset does not redraw.
    for name, kept in (
        ("minatar_asterix", ["state.last_action"]),
        ("minatar_seaquest", ["state.last_action"]),
        ("cartpole", []),
        ("minatar_breakout", []),
    ):
        spec = load_spec(EXAMPLES / name)
        assert Played(spec, Reference(spec), 0).kept == kept, name


@pytest.mark.parametrize("target", ["numpy", "jax"])
@pytest.mark.parametrize("name", ["minatar_asterix", "minatar_seaquest"])
def test_the_known_good_minatar_ports_keep_the_last_action(name: str, target: str) -> None:
    level = check(name, EXAMPLES / name / "ports" / target, target)
    assert level.passed, [d.text() for d in level.divergences]
    assert level.name == "l2.reset_after_play" and "keeps state.last_action" in level.note


def test_gymnasiums_own_reference_through_the_numpy_path_is_not_flagged() -> None:
    level = check("cartpole", EXAMPLES / "cartpole" / "ports" / "numpy", "numpy")
    assert level.passed and "keeps nothing across reset()" in level.note


def test_a_numpy_port_whose_reset_clears_the_last_action_is_named(tmp_path: Path) -> None:
    port = mutated("minatar_asterix", "numpy-last-action-reset", tmp_path)
    level = check("minatar_asterix", port, "numpy")
    assert not level.passed
    (divergence,) = level.divergences
    assert [f.field for f in divergence.fields] == ["state.last_action"]
    assert divergence.fields[0].actual == 0 and divergence.fields[0].expected != 0
    assert divergence.message.startswith("state.last_action: expected ")
    assert "after the port's VectorEnv.reset(seed)" in divergence.message
    assert divergence.replay == "envport verify ..."


@pytest.mark.parametrize(
    "name, mutant_id",
    [
        ("minatar_asterix", "jax-reset-after-forgets-last-action"),
        # pgx's MinAtar: `init(key)` only, so every episode starts with last action 0.
        ("minatar_seaquest", None),
    ],
)
def test_a_jax_port_that_forgets_the_last_action_is_named(
    name: str, mutant_id: str | None, tmp_path: Path
) -> None:
    port = (
        EXAMPLES / name / "ports" / "pgx"
        if mutant_id is None
        else mutated(name, mutant_id, tmp_path)
    )
    level = check(name, port, "jax")
    assert not level.passed
    assert [f.field for f in level.divergences[0].fields] == ["state.last_action"]
    if mutant_id is None:
        assert "after the port's reset() (it has no `reset_after`)" in level.note


@pytest.mark.slow  # l2.vector's five batch sizes: about 10 s on a loaded machine
def test_a_numpy_autoreset_that_forgets_the_last_action_is_held_by_l2_vector(
    tmp_path: Path,
) -> None:
    # The other half of a reset after play: the VectorEnv's own autoreset, which l2.vector
    # holds to the reference's own reset of the same env. This port keeps the last action
    # in reset(seed) but not when it autoresets.
    port = tmp_path / "numpy"
    shutil.copytree(EXAMPLES / "minatar_asterix" / "ports" / "numpy", port)
    env = port / "env.py"
    kept = '            self.state["last_action"][done_before] = kept_action[done_before]\n'
    assert env.read_text().count(kept) == 1
    env.write_text(env.read_text().replace(kept, ""))
    spec = load_spec(EXAMPLES / "minatar_asterix")
    sample = reset_sample.draw(spec, Reference(spec), seed=0)
    with started_worker(EXAMPLES / "minatar_asterix", port, "numpy") as worker:
        after_play = check_reset_after_play(spec, Reference(spec), worker, 0, "envport verify")
        vector = check_vector(spec, worker, sample, 0, "envport verify")
    assert after_play.passed, after_play.note
    assert not vector.passed
    assert [f.field for f in vector.divergences[0].fields] == ["state.last_action"]
    assert "kept by the reference's reset" in str(vector.divergences[0].fields[0].expected)
