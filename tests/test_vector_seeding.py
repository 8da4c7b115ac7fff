"""l2.vector's seeding part: what `reset(seed=...)` promises a user of the VectorEnv.

Gymnasium's own SyncVectorEnv of each reference keeps every promise (no false alarm on the
library itself); each seeding mutant of the examples breaks one, and the report says which.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from envport.spec import load_spec
from envport.verifiers.selfcheck import apply_mutant, load_mutants
from envport.verifiers.vector import seeding as vector_seeding

from helpers import ROOT, started_worker

EXAMPLES = ROOT / "examples"


@pytest.mark.parametrize("name", ["cartpole", "frozenlake", "taxi", "pendulum", "blackjack"])
def test_gymnasiums_sync_vector_env_keeps_every_promise(name: str) -> None:
    spec = load_spec(EXAMPLES / name)
    reference = vector_seeding.ReferenceVector(spec)
    assert vector_seeding.check_seeding(spec, reference, 0, "replay") == []


SEEDING_MUTANTS = [
    ("cartpole", "numpy-partial-reset-entropy", "the same calls on two fresh VectorEnvs"),
    ("cartpole", "numpy-partial-reset-ignores-seed", "after another history"),
    ("cartpole", "numpy-constant-seed", "ignores the seed"),
    ("frozenlake", "numpy-partial-reset-ignores-seed", "ignores the seed of a partial reset"),
    ("blackjack", "numpy-unseeded-reset-reseeds", "must draw on from the generator"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "mutant_id", "message"), SEEDING_MUTANTS)
def test_a_seeding_mutant_breaks_its_promise(
    name: str, mutant_id: str, message: str, tmp_path: Path
) -> None:
    mutant = next(m for m in load_mutants(EXAMPLES / name) if m.id == mutant_id)
    port = apply_mutant(mutant, EXAMPLES / name / "ports" / "numpy", tmp_path / "numpy")
    spec = load_spec(EXAMPLES / name)
    with started_worker(EXAMPLES / name, port, "numpy") as worker:
        found = vector_seeding.check_seeding(spec, worker, 0, "replay")
    assert found and message in found[0].message, [d.message for d in found]
    assert found[0].level == "l2" and found[0].mode == "vector" and found[0].fields


@pytest.mark.slow
@pytest.mark.parametrize("name", ["cartpole", "frozenlake"])
def test_known_good_ports_keep_every_promise(name: str) -> None:
    spec = load_spec(EXAMPLES / name)
    with started_worker(EXAMPLES / name, EXAMPLES / name / "ports" / "numpy", "numpy") as worker:
        assert vector_seeding.check_seeding(spec, worker, 0, "replay") == []
