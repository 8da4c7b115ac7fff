"""The MinAtar Asterix example: objects that come and go (eight slots, each None or an
object) bridged as flags and numbers, sticky actions at MinAtar's default 0.1 and the spawn
as the game's own randomness mapped to the port's noise, and the known-good NumPy and JAX ports.

`envport verify examples/minatar_asterix --port examples/minatar_asterix/ports/numpy` runs
the full budgets.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from envport.spec import load_spec
from envport.targets.reference import Reference
from envport.verifiers.coverage.determinism import check_reference_determinism
from envport.verifiers.selfcheck import apply_mutant, check_mutant, load_mutants
from envport.verifiers.verify import VerifyOptions, verify

from helpers import ROOT

ASTERIX = ROOT / "examples" / "minatar_asterix"
NUMPY = ASTERIX / "ports" / "numpy"


def _spawn_due(reference: Reference) -> dict:
    """A state whose spawn comes this step, with slots 0, 3 and 5 taken."""
    reference.reset(0)
    state = reference.read_state()
    taken = np.zeros(8, dtype=bool)
    taken[[0, 3, 5]] = True
    return {
        **state,
        "spawn_timer": np.int64(0),
        "slot_taken": taken,
        "slot_x": np.where(taken, 4, 0).astype(np.int64),
        "slot_right": taken.copy(),
        "slot_gold": np.zeros(8, dtype=bool),
        "player_x": np.int64(9),
        "player_y": np.int64(8),
    }


def test_the_slots_round_trip_and_a_spawn_fills_a_free_one_named_by_the_noise() -> None:
    spec = load_spec(ASTERIX)
    reference = Reference(spec)
    reference.write_state(_spawn_due(reference))
    back = reference.read_state()
    assert back["slot_taken"].tolist() == [True, False, False, True, False, True, False, False]
    # The game's own list: None in a free slot, [x, row, right, gold] in a taken one.
    game = reference.env.unwrapped.game.env
    assert game.entities[1] is None and game.entities[3] == [4, 4, True, False]
    step = reference.step(0)
    after = reference.read_state()
    added = np.flatnonzero(after["slot_taken"] & ~back["slot_taken"])
    assert len(added) == 1 and not back["slot_taken"][added[0]]
    # The step's noise: the sticky draw, the side, gold or not, and the free slot chosen as a
    # fraction of the five free slots (in slot order).
    noise = np.asarray(step.noise, dtype=np.float64)
    assert noise.shape == (4,) and ((noise >= 0) & (noise < 1)).all()
    free = np.flatnonzero(~back["slot_taken"])
    assert free[int(np.floor(noise[3] * len(free)))] == added[0]
    assert bool(after["slot_right"][added[0]]) == (noise[1] < 0.5)
    assert bool(after["slot_gold"][added[0]]) == (noise[2] < 1 / 3)


def test_the_reference_is_deterministic_given_its_declared_draws() -> None:
    spec = load_spec(ASTERIX)
    check_reference_determinism(spec, Reference(spec), 0)


def test_mutant_edits_apply_exactly_once(tmp_path) -> None:
    mutants = load_mutants(ASTERIX)
    assert len({m.id for m in mutants}) == len(mutants) >= 10
    assert {m.target for m in mutants} == {"jax", "numpy"}
    for mutant in mutants:
        port = apply_mutant(mutant, ASTERIX / "ports" / mutant.target, tmp_path / mutant.id)
        assert mutant.new in (port / mutant.file).read_text()


@pytest.mark.slow
@pytest.mark.parametrize("target", ["numpy", "jax"])
def test_the_known_good_ports_verify(target: str, tmp_path: Path) -> None:
    # Budgets cut to keep the tier's time, the noise tests' samples too (12,303 by their
    # design); every check still runs.
    spec = tmp_path / "asterix"
    shutil.copytree(ASTERIX, spec, ignore=shutil.ignore_patterns("ports", "__pycache__"))
    toml = spec / "envport.toml"
    text = toml.read_text()
    assert text.count('generator = "unwrapped.game.random"\n') == 1
    toml.write_text(
        text.replace(
            'generator = "unwrapped.game.random"\n',
            'generator = "unwrapped.game.random"\nsamples = 3000\n',
        )
    )
    options = VerifyOptions(target=target, examples=60, episodes=30)
    report = verify(str(spec), str(ASTERIX / "ports" / target), options)
    assert report.passed, report.text()
    assert {level.level for level in report.levels} == {"l1", "l2", "l3"}


# MinAtar keeps the sticky `last_action` across episodes: a port that clears it on reset
# differs from the reference only in a reset that follows an episode, which l2.reset_after_play
# makes (`reset()` after play; a JAX port's `reset_after`) and l2.vector too (NumPy: each
# autoreset and partial reset held to the reference's own reset of the same env).
@pytest.mark.slow
@pytest.mark.parametrize(
    "mutant_id", ["numpy-last-action-reset", "jax-reset-after-forgets-last-action"]
)
def test_a_port_that_clears_the_last_action_on_reset_is_caught_at_l2(mutant_id: str) -> None:
    mutant = next(m for m in load_mutants(ASTERIX) if m.id == mutant_id)
    options = VerifyOptions(target=mutant.target, levels=("l2",), shrink=False)
    result = check_mutant(ASTERIX, mutant, options)
    assert result.caught and result.ok, result
    assert result.first is not None and "last_action" in str(result.first.fields)
    assert "l2.reset_after_play" in result.caught_by, result.caught_by


# A timer the observation does not show: every output of the step agrees, only the state it
# leaves differs. L2's sequences and L3's episodes never reach the ramp's fifth stage with
# the move timer due; L1's transition check compares the state after the step.
@pytest.mark.slow
def test_a_hidden_timer_is_caught_at_l1_by_the_state_the_step_leaves() -> None:
    mutant = next(m for m in load_mutants(ASTERIX) if m.id == "numpy-move-timer-stuck-on-ramp-5")
    result = check_mutant(ASTERIX, mutant, VerifyOptions(levels=("l1",), shrink=False))
    assert result.caught and result.ok, result
    assert result.first is not None
    assert [d.field for d in result.first.fields] == ["state.move_timer"]
