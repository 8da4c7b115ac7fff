"""The MinAtar Freeway example: a reference whose step draws from the game's own legacy
RandomState (`[randomness] generator`), its noise mapping, the known-good NumPy port
verifying L1-L3 with that noise, and its mutants caught.

`envport verify examples/minatar_freeway --port examples/minatar_freeway/ports/numpy` runs
the full budgets; `python benchmarks/mutation_check.py examples/minatar_freeway` every level
on every mutant.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from envport.errors import SpecError
from envport.spec import load_spec
from envport.targets.randomness import RecordingGenerator
from envport.targets.reference import Reference
from envport.verifiers.coverage.determinism import check_reference_determinism
from envport.verifiers.selfcheck import apply_mutant, load_mutants
from envport.verifiers.verify import VerifyOptions, verify

from helpers import ROOT

FREEWAY = ROOT / "examples" / "minatar_freeway"
NUMPY = FREEWAY / "ports" / "numpy"


def _one_row_from_the_top(reference: Reference) -> dict:
    reference.reset(0)
    return {**reference.read_state(), "pos": np.int64(1), "move_timer": np.int64(0)}


def test_a_crossing_draws_the_lanes_speeds_from_the_games_random_state_as_noise() -> None:
    reference = Reference(load_spec(FREEWAY))
    reference.reset(4)
    game = reference.env.unwrapped.game
    assert isinstance(game.env.random, RecordingGenerator)
    reference.write_state(_one_row_from_the_top(reference))
    out = reference.step(1)  # up: the chicken reaches row 0 and scores
    assert out.reward == 1.0
    # One stream under both of MinAtar's names: the sticky draw, then the lanes' speeds.
    assert game.random is game.env.random
    sticky, *draws = game.env.random.draws
    assert sticky.method == "rand" and sticky.args == ()
    assert [d.method for d in draws] == ["randint", "rand"]
    after = reference.read_state()
    speeds = np.asarray(draws[0].value)
    right = np.asarray(draws[1].value) > 0.5
    assert np.array_equal(out.noise, speeds - 1 + 5 * right)
    assert np.array_equal(after["car_speed"], speeds)
    assert np.array_equal(after["car_right"], right)
    # A frame without a crossing draws nothing; its filler noise is a function of the step.
    reference.write_state(_one_row_from_the_top(reference) | {"move_timer": np.int64(2)})
    quiet = reference.step(1)
    assert quiet.reward == 0.0 and [d.args for d in game.env.random.draws] == [()]
    assert quiet.noise.shape == (8,) and ((quiet.noise >= 0) & (quiet.noise <= 9)).all()


def test_minatars_reseeding_reset_gets_a_new_proxy() -> None:
    reference = Reference(load_spec(FREEWAY))
    reference.reset(1)
    first = reference.env.unwrapped.game.env.random
    reference.reset(2)  # MinAtar's seed(): a new RandomState object
    second = reference.env.unwrapped.game.env.random
    assert isinstance(second, RecordingGenerator) and second is not first
    assert isinstance(second.inner, np.random.RandomState)


def test_the_reference_passes_the_preflight_with_its_draws_declared() -> None:
    spec = load_spec(FREEWAY)
    check_reference_determinism(spec, Reference(spec), 0)


def test_sticky_actions_on_are_stopped_though_their_draw_is_declared(tmp_path: Path) -> None:
    """The sticky draw is recorded (one RandomState under both names) and replayed alike in
    both measured steps; what it repeats, the wrapper's `last_action`, is no state field, and
    the preflight's warm-up steps of different actions show it."""
    copy = tmp_path / "sticky"
    shutil.copytree(FREEWAY, copy, ignore=shutil.ignore_patterns("ports", "__pycache__"))
    toml = copy / "envport.toml"
    toml.write_text(
        toml.read_text().replace("sticky_action_prob = 0.0", "sticky_action_prob = 0.1")
    )
    spec = load_spec(copy)
    with pytest.raises(SpecError) as caught:
        check_reference_determinism(spec, Reference(spec), 2)  # a seed whose probes meet a repeat
    message = str(caught.value)
    assert message.startswith(
        "the reference is not deterministic from an injected state and its declared draws"
    )
    assert "state.move_timer: 2 then 0" in message and "`last_action`" in message, message
    assert "Carry what it reads as a state field" in message and "\n" not in message


def test_mutant_edits_apply_exactly_once(tmp_path: Path) -> None:
    mutants = load_mutants(FREEWAY)
    assert len({m.id for m in mutants}) == len(mutants) >= 3
    assert any("noise" in m.id for m in mutants)
    for mutant in mutants:
        port = apply_mutant(mutant, FREEWAY / "ports" / mutant.target, tmp_path / mutant.id)
        assert mutant.new in (port / mutant.file).read_text()


@pytest.mark.slow
@pytest.mark.parametrize("target", ["numpy", "jax"])
def test_the_known_good_port_verifies(target: str) -> None:
    # Budgets cut to keep the tier's time; every check and probe still runs.
    report = verify(
        str(FREEWAY),
        str(FREEWAY / "ports" / target),
        VerifyOptions(target=target, examples=60, episodes=20),
    )
    assert report.passed, report.text()
    assert {level.level for level in report.levels} == {"l1", "l2", "l3"}


# The level each mutant is checked at: the first that catches it in
# `benchmarks/mutation_check.py` (a reset slip only l2.reset sees; L1 for the rest).
LEVELS: dict[str, tuple[str, ...]] = {"numpy-reset-timers-zero": ("l2",)}


@pytest.mark.slow
@pytest.mark.parametrize("mutant", load_mutants(FREEWAY), ids=lambda m: m.id)
def test_each_mutant_is_caught(mutant, tmp_path) -> None:
    port = apply_mutant(mutant, FREEWAY / "ports" / mutant.target, tmp_path / mutant.id)
    levels = LEVELS.get(mutant.id, ("l1",))
    # Caught is all this asks: the first failing check ends the verify.
    options = VerifyOptions(target=mutant.target, levels=levels, shrink=False, fail_fast=True)
    report = verify(str(FREEWAY), str(port), options)
    assert report.error is None and not report.passed, report.text()
