"""The state API's own contract: loading a state keeps none of the caller's arrays and a
state read hands out copies (envport.targets.state_api, checked as `l2.state_api`)."""

from __future__ import annotations

import numpy as np
import pytest

from envport.targets.state_api import changed, copied, scribble
from envport.verifiers.selfcheck import check_mutant, load_mutants
from envport.verifiers.verify import VerifyOptions

from helpers import CARTPOLE

STATE_API_MUTANTS = (
    "jax-bridge-keeps-counter",
    "numpy-set-state-keeps-arrays",
    "numpy-get-state-own-arrays",
)


def test_a_scribble_changes_every_writable_array_and_a_copy_keeps_it() -> None:
    state = {"x": np.zeros(3), "n": np.arange(2), "flag": np.array([True]), "nested": [np.ones(1)]}
    kept = copied(state)
    scribble(state)
    assert changed(kept, state) == ["x", "n", "flag", "nested.0"]
    assert changed(kept, copied(kept)) == []


@pytest.mark.slow
@pytest.mark.parametrize("mutant_id", STATE_API_MUTANTS)
def test_a_port_keeping_the_callers_arrays_is_caught_by_the_state_api_check(
    mutant_id: str,
) -> None:
    (mutant,) = [m for m in load_mutants(CARTPOLE) if m.id == mutant_id]
    result = check_mutant(CARTPOLE, mutant, VerifyOptions(levels=("l2",), shrink=False))
    assert result.levels_catching == ["l2"], (result.levels_catching, result.error)
    # Caught by the state API check alone: every comparison of states and steps passes.
    assert result.first is not None and result.first.mode == "state_api", result.first
    assert "caller" in result.first.message or "snapshot" in result.first.message
    assert result.replay_matches is True
