"""l2.vector's seeding part: what `reset(seed=...)` promises a user of the VectorEnv.

Gymnasium's own SyncVectorEnv of each reference keeps every promise (no false alarm on the
library itself); each seeding mutant of the examples breaks one, and the report says which.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from envport.serve import ops
from envport.spec import PortSpec, load_spec
from envport.verifiers.selfcheck import apply_mutant, load_mutants
from envport.verifiers.vector import seeding as vector_seeding
from envport.verifiers.vector import stream as vector_stream

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


class OneLuckyDraw(vector_seeding.ReferenceVector):
    """The reference's SyncVectorEnv, except that the first unseeded reset of the given kind
    gives back the seeded reset's envs, as a port drawing that reset from fresh entropy does
    by chance when the start has few outcomes (Breakout: 1 in 128 at B = 7)."""

    def __init__(self, spec: PortSpec, masked: bool, always: bool = False) -> None:
        super().__init__(spec)
        self.masked, self.always = masked, always
        self.seeded: dict[str, Any] | None = None
        self.lucky = 0

    def request(self, op: Any) -> dict[str, Any]:
        unseeded = isinstance(op, ops.VectorReset) and op.seed is None
        kind = unseeded and (op.mask is not None) == self.masked
        if kind and self.seeded is not None and (self.always or self.lucky == 0):
            self.lucky += 1
            return self.seeded
        answer = super().request(op)
        if isinstance(op, ops.VectorReset) and op.seed is not None:
            self.seeded = answer
        return answer


@pytest.mark.parametrize("masked", [False, True])
def test_one_unseeded_reset_that_gives_back_the_seeded_starts_is_chance_not_a_replay(
    masked: bool,
) -> None:
    spec = load_spec(EXAMPLES / "minatar_breakout")
    target = OneLuckyDraw(spec, masked)
    assert vector_stream.resets_continue_the_stream(spec, target, 0, "replay") == []
    assert target.lucky == 1


@pytest.mark.parametrize("masked", [False, True])
def test_unseeded_resets_that_always_give_back_the_seeded_starts_are_a_replay(
    masked: bool,
) -> None:
    spec = load_spec(EXAMPLES / "minatar_breakout")
    target = OneLuckyDraw(spec, masked, always=True)
    found = vector_stream.resets_continue_the_stream(spec, target, 0, "replay")
    call = "reset(options=reset_mask)" if masked else "reset() without a seed"
    assert found and found[0].message.startswith(call), [d.message for d in found]
    assert "16 times of 16" in found[0].message


def test_a_replay_needs_the_reference_to_move_on_in_most_resets() -> None:
    moved = [True] * 12 + [False] * 4
    assert vector_stream.replays_the_seeded_starts(moved, [False] * 16)
    assert not vector_stream.replays_the_seeded_starts(moved, [False] * 15 + [True])
    assert not vector_stream.replays_the_seeded_starts([True] * 11 + [False] * 5, [False] * 16)
