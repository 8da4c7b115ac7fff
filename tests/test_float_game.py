"""A game with a float observation and fractional payoffs (tests/pot_game: a PettingZoo AEC
game, float32 [pot, raises / 4], payoffs half the pot): its float32 JAX port verifies with
`jax_enable_x64` off, because a turn record's dtype follows from the observation's alone and
never from how NumPy or JAX promote the parts; and the prompt says what the reference's
rewards really are."""

from __future__ import annotations

import numpy as np
import pytest

from envport.pipeline.observed import observe
from envport.spec import load_spec
from envport.targets.turns import turn_records
from envport.verifiers.verify import VerifyOptions, verify

from helpers import ROOT

pytest.importorskip("pettingzoo")
jnp = pytest.importorskip("jax.numpy")

POT_GAME = ROOT / "tests" / "pot_game"
PORT = POT_GAME / "ports" / "jax"


def test_numpy_and_jax_stack_a_float32_turn_in_the_same_dtype() -> None:
    """The reference's record (NumPy) and the port's (JAX, x64 off) of a float32 observation
    with an int8 mask: NumPy's promotion with int32 made the first float64."""
    observation, mask = np.array([[1.5, 0.25]], np.float32), np.ones((1, 2), np.int8)
    reference = turn_records(observation, [0], mask)
    port = turn_records(jnp.asarray(observation), jnp.asarray([0]), jnp.asarray(mask), xp=jnp)
    assert reference.dtype == np.float32 and port.dtype == jnp.float32
    # An integer observation stays an int32 record on both sides, compared by value.
    board = np.zeros((1, 3), np.int8)
    assert turn_records(board, [1], mask).dtype == np.int32
    assert turn_records(jnp.asarray(board), jnp.asarray([1]), jnp.asarray(mask), xp=jnp).dtype == (
        jnp.int32
    )


def test_a_float32_jax_port_of_a_float_observation_verifies_with_x64_off() -> None:
    # The port leaves JAX's global config alone: it never names the switch (and the static
    # review, which the verdict includes, refuses `jax.config` in a port's source).
    source = (PORT / "env.py").read_text()
    assert "x64" not in source.replace("`jax_enable_x64`", "") and ".config" not in source
    report = verify(str(POT_GAME), str(PORT), VerifyOptions(target="jax"))
    assert report.passed, report.text()
    checks = {f"{level.level}.{level.mode}" for level in report.levels}
    assert {"l1.transition", "l2.reset", "l3.free"} <= checks, checks
    assert "obs.dtype" not in report.text()


def test_the_prompt_says_the_rewards_are_floats_when_payoffs_are_fractions() -> None:
    """Rewards read after a reset are PettingZoo's int 0; the payoffs of a move are floats."""
    observed = observe(load_spec(POT_GAME))
    assert observed.game is not None
    assert "Python float" in observed.game["reward"], observed.game
    assert observed.game["observation_dtype"] == "float32"
