"""Structured state (docs/structured-state.md): declared lists and enums in the spec, the
reference's lists as fixed-shape leaves and back, draws from enums and capacities under
the spec's validity constraints, and reports naming leaf paths and enum names."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings

from envport.errors import SpecError
from envport.spec import PortSpec, load_spec
from envport.structure import OverCapacity, canonical, decode, encode, leaf_names, violated
from envport.targets.reference import Reference
from envport.verifiers.draws.strategies import state_strategy
from envport.verifiers.levels.l3.cases import Case, given_state, load_cases, play_case
from envport.verifiers.reporting.divergence import FieldDiff
from envport.verifiers.reporting.states import field_diffs

from helpers import ROOT

CARDS = "\n".join(f'"{v}" = {v}' for v in range(2, 11))
SPEC = f"""
name = "t"
[reference]
entry = "gymnasium:Blackjack-v1"
[state]
valid = ["sum(hand.player) <= 21", "len(hand.dealer) >= 1"]
[state.fields.hand.player]
path = "unwrapped.player"
kind = "list"
capacity = 6
enum = "card"
[state.fields.hand.dealer]
path = "unwrapped.dealer"
kind = "list"
capacity = 12
enum = "card"
[state.enums.card]
ace = 1
{CARDS}
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "envport.toml"
    path.write_text(text)
    return path


def test_nested_declarations_load_as_leaf_paths(tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path, SPEC))
    assert spec.state.fields == {
        "hand.player": "unwrapped.player",
        "hand.dealer": "unwrapped.dealer",
    }
    assert spec.state.declared["hand.player"].capacity == 6
    assert leaf_names(spec.state) == [
        "hand.player",
        "hand.player.length",
        "hand.dealer",
        "hand.dealer.length",
    ]


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        (("capacity = 6\n", ""), "key `state.fields.hand.player`: a `list` field needs `capacity`"),
        (('enum = "card"\n', 'enum = "suit"\n'), "unknown enum `suit`"),
        (('"sum(hand.player) <= 21"', '"sum(hand.player) <="'), "not a Python expression"),
        (('kind = "list"\n', 'kind = "bag"\n'), "key `state.fields.hand.player.kind`"),
        (
            (
                "[state.enums.card]",
                '[state.bounds]\n"hand.dealer" = { low = 1, high = 2 }\n[state.enums.card]',
            ),
            "give its items' bounds as `items`",
        ),
    ],
)
def test_bad_declarations_are_one_line_naming_the_key(
    tmp_path: Path, change: tuple[str, str], fragment: str
) -> None:
    with pytest.raises(SpecError) as caught:
        load_spec(write(tmp_path, SPEC.replace(*change, 1)))
    assert fragment in str(caught.value)
    assert "\n" not in str(caught.value)


def test_lists_become_padded_items_and_a_length_and_back(tmp_path: Path) -> None:
    state = load_spec(write(tmp_path, SPEC)).state
    leaves = encode(state, {"hand.player": [1, 10], "hand.dealer": [7, 2, 9]})
    assert leaves["hand.player"].tolist() == [1, 10, 0, 0, 0, 0]
    assert leaves["hand.player.length"] == 2 and leaves["hand.dealer.length"] == 3
    assert decode(state, leaves) == {"hand.player": [1, 10], "hand.dealer": [7, 2, 9]}
    with pytest.raises(OverCapacity, match="holds 7 items, more than its capacity 6"):
        encode(state, {"hand.player": [1] * 7})


def test_the_reference_reads_and_writes_its_lists_through_paths(tmp_path: Path) -> None:
    reference = Reference(load_spec(write(tmp_path, SPEC)))
    reference.reset(3)
    state = reference.read_state()
    state["hand.player"][:3] = [2, 3, 4]
    state["hand.player.length"] = np.int64(3)
    reference.write_state(state)
    assert reference.env.unwrapped.player == [2, 3, 4]
    assert all(type(card) is int for card in reference.env.unwrapped.player)
    assert reference.env.step(0)[0][0] == 9  # the reference plays the written hand


def test_draws_cover_lengths_and_codes_and_keep_the_rules(tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path, SPEC))
    seen_lengths: set[int] = set()
    seen_cards: set[int] = set()

    @settings(max_examples=300, database=None, derandomize=True)
    @given(state_strategy(spec))
    def check(state: dict[str, np.ndarray]) -> None:
        length = int(state["hand.player.length"])
        hand = state["hand.player"]
        assert violated(spec.state, state) is None
        assert hand[:length].sum() <= 21 and int(state["hand.dealer.length"]) >= 1
        assert (hand[length:] == 0).all()
        assert set(hand[:length].tolist()) <= set(range(1, 11))
        seen_lengths.add(length)
        seen_cards.update(hand[:length].tolist())

    check()
    # Every length is drawn; the longest hands rarely keep to 21, so at least up to five.
    assert set(range(0, 6)) <= seen_lengths <= set(range(0, 7))
    assert seen_cards == set(range(1, 11))


def test_reports_name_leaf_paths_and_enum_names(tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path, SPEC))
    expected = encode(spec.state, {"hand.player": [1, 5, 10], "hand.dealer": [7, 2]})
    actual = {k: v.copy() for k, v in expected.items()}
    actual["hand.player"][2] = 1
    actual["hand.dealer"][4] = 9  # past the dealer's length: not part of the state
    diffs = field_diffs(spec, expected, actual, label="state.")
    assert [d.line() for d in diffs] == ["state.hand.player[2]: expected 10, got ace"]
    actual["hand.player"][2] = 12
    assert field_diffs(spec, expected, actual)[0] == FieldDiff(
        field="hand.player[2]", expected="10", actual="?(12)"
    )
    assert canonical(spec.state, actual)["hand.dealer"][4] == 0


def test_a_proposed_case_gives_a_hand_by_its_cards(tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path, SPEC))
    case = Case(state={"hand.player": [1, 10], "hand.dealer": [10, 6]}, actions=[0])
    given = given_state(spec, case)
    assert given["hand.player"].tolist() == [1, 10, 0, 0, 0, 0]
    assert int(given["hand.dealer.length"]) == 2
    played = play_case(Reference(spec), 0, case)
    assert played.states["hand.player"][0].tolist() == [1, 10, 0, 0, 0, 0]
    # Sutton and Barto's rule (Blackjack-v1's default): a natural beats a dealer without one.
    assert played.steps.reward.tolist() == [1.0]
    (cases_dir := tmp_path / "cases").mkdir()
    (cases_dir / "a.toml").write_text(
        '[[case]]\nstate = { "hand.player" = [1, 10], "hand.player.length" = 2 }\nactions = [0]\n'
        '[[case]]\nstate = { "hand.players" = [1] }\nactions = [0]\n'
    )
    usable, unusable = load_cases(cases_dir, spec)
    assert [name for name, _ in usable] == ["a.toml#0"]
    assert unusable == [("a.toml#1", "unknown state field hand.players")]


def test_a_dumped_structured_spec_loads_as_it_was() -> None:
    """Tests and run copies write a spec back from `model_dump`: its declarations, dumped
    beside the flat paths, must fold back into the same fields."""
    spec = load_spec(ROOT / "examples" / "blackjack" / "envport.toml")
    again = PortSpec.model_validate(spec.model_dump(mode="json", exclude_none=True))
    assert again.state.declared == spec.state.declared
    assert again.state.fields == spec.state.fields
    assert again.state.declared  # the example does declare structure


RECORDS = """
name = "t"
[reference]
entry = "gymnasium:Blackjack-v1"
[state.fields.fish]
path = "unwrapped.fish"
kind = "list"
capacity = 3
items = { low = [0, 1, 0], high = [9, 8, 1], integer = true }
record = ["x", "y", "right"]
"""


def test_lists_of_records_keep_their_shape_draw_whole_records_and_name_their_fields(
    tmp_path: Path,
) -> None:
    """MinAtar keeps its objects as lists of `[x, y, right, ...]`: a list whose items are
    records, each item drawn inside its bounds, an empty list still (capacity, fields), and
    a divergence naming the object and its field."""
    spec = load_spec(write(tmp_path, RECORDS))
    empty = encode(spec.state, {"fish": []})
    assert empty["fish"].shape == (3, 3) and int(empty["fish.length"]) == 0
    leaves = encode(spec.state, {"fish": [[4, 2, 1], [9, 8, 0]]})
    assert leaves["fish"].tolist() == [[4, 2, 1], [9, 8, 0], [0, 0, 0]]
    assert decode(spec.state, leaves) == {"fish": [[4, 2, 1], [9, 8, 0]]}
    lengths: set[int] = set()

    @settings(max_examples=100, database=None, derandomize=True)
    @given(state_strategy(spec))
    def check(state: dict[str, np.ndarray]) -> None:
        fish, length = state["fish"], int(state["fish.length"])
        assert fish.shape == (3, 3)
        assert ((fish[:length] >= [0, 1, 0]) & (fish[:length] <= [9, 8, 1])).all()
        assert (fish[length:] == 0).all()
        lengths.add(length)

    check()
    assert lengths == {0, 1, 2, 3}
    actual = {k: v.copy() for k, v in leaves.items()}
    actual["fish"][1][0] = 7
    actual["fish"][2][0] = 5  # past the length: not part of the state
    diffs = field_diffs(spec, leaves, actual, label="state.")
    assert [d.line() for d in diffs] == ["state.fish[1].x: expected 9, got 7"]
    with pytest.raises(SpecError, match="`record` names the numbers"):
        load_spec(write(tmp_path, RECORDS.replace('"right"]', '"right", "timer"]')))
