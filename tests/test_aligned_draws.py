"""Slots of objects under `state.valid` (envport.verifiers.draws.aligned): where the rules
hold slot by slot, the slots are drawn one by one, and the whole state still passes every
rule. MinAtar Asterix's rule (a free lane reads 0 in every number) kept one whole-state draw
in 200: Hypothesis rejected the rest and spent 97% of that example's verify drawing."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings

from envport.spec import PortSpec, load_spec
from envport.structure import violated
from envport.verifiers.draws.aligned import aligned_fields, holds_row_by_row
from envport.verifiers.draws.strategies import SMALL_FIELD, state_strategy

from helpers import ROOT

ASTERIX = ROOT / "examples" / "minatar_asterix"


def test_asterix_lanes_are_drawn_lane_by_lane_and_every_state_passes_the_rules() -> None:
    spec = load_spec(ASTERIX)
    found = aligned_fields(spec, SMALL_FIELD)
    assert found is not None
    fields, rules, length = found
    assert fields == ["slot_gold", "slot_right", "slot_taken", "slot_x"] and length == 8
    assert holds_row_by_row(spec, fields, rules, length)
    drawn: list[dict[str, np.ndarray]] = []

    # Hypothesis's own count of rejected draws is the measure (not the clock): with the
    # whole state filtered, it gives up with "filter_too_much" long before 50 are kept.
    @settings(
        max_examples=50,
        database=None,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.large_base_example],
    )
    @given(state_strategy(spec))
    def collect(state: dict[str, np.ndarray]) -> None:
        drawn.append(state)

    collect()
    assert len(drawn) == 50
    assert all(violated(spec.state, state) is None for state in drawn)
    # Both kinds of lane are drawn: taken ones anywhere, free ones.
    taken = np.concatenate([state["slot_taken"] for state in drawn])
    assert 0 < taken.mean() < 1


def test_a_rule_that_compares_slots_with_each_other_is_left_to_the_whole_state() -> None:
    asterix = load_spec(ASTERIX)

    def ruled(rule: str) -> PortSpec:
        state = asterix.state.model_copy(update={"valid": [rule]})
        return asterix.model_copy(update={"state": state})

    spec = ruled("len(np.unique(slot_x)) == len(slot_x)")  # no two lanes alike
    found = aligned_fields(spec, SMALL_FIELD)
    assert found is not None and not holds_row_by_row(spec, *found)
    # A rule that names a field of another shape is no rule of lanes.
    assert aligned_fields(ruled("np.all(slot_x <= player_x)"), SMALL_FIELD) is None
