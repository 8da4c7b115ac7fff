"""Out-of-range actions, edge draws, landings, endings at the limit and odd batch sizes.

Each class of bug the uniform draws never met has mutants in the examples' lists: here each
is shown caught, by the check built for it, on real Gymnasium references and real port
workers. The known-good ports passing the same checks is shown by test_examples.py and
test_verify_cli.py (every level, every example).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from gymnasium import spaces
from hypothesis import given, settings
from pydantic import ValidationError

from envport.spec import L2Spec, load_spec
from envport.targets.reference import Reference
from envport.verifiers.draws.action_range import action_range
from envport.verifiers.draws.constants import source_constants, threshold_warnings
from envport.verifiers.draws.landing import Landing, ending_starts, land, unresolved
from envport.verifiers.draws.policies import Planner
from envport.verifiers.draws.strategies import Draws, action_strategy, draws_for
from envport.verifiers.reporting.compare import Steps, divergent_steps
from envport.verifiers.selfcheck import apply_mutant, load_mutants
from envport.verifiers.verify import VerifyOptions, verify

from helpers import ROOT, run_envport

THETA = 12 * 2 * math.pi / 360
HERE = Path(__file__).resolve().parent


def example(name: str) -> Path:
    # `continuous` is MountainCarContinuous, a test subject kept beside this file.
    return HERE / name if name == "continuous" else ROOT / "examples" / name


def reference(name: str) -> Reference:
    return Reference(load_spec(example(name)))


# ---- what the reference's source compares against ----


def test_constants_come_from_the_reference_source_resolved_on_the_env() -> None:
    cartpole = source_constants(reference("cartpole").env)
    assert {-2.4, 2.4, -THETA, THETA} <= set(cartpole.compared)
    pendulum = source_constants(reference("pendulum").env)
    assert set(pendulum.clipped) == {-8.0, -2.0, 2.0, 8.0} and not pendulum.compared
    # MountainCar's wall is compared (`position == self.min_position`) and clipped to.
    mountaincar = source_constants(reference("mountaincar").env)
    assert -1.2 in mountaincar.compared and -1.2 in mountaincar.clipped
    assert {0.5, 0.0} <= set(mountaincar.compared)
    # Acrobot's own `bound` and `wrap` helpers count as clips: +-pi, +-4pi, +-9pi.
    acrobot = source_constants(reference("acrobot").env)
    assert {-math.pi, math.pi, 4 * math.pi, 9 * math.pi} <= set(acrobot.clipped)


def test_a_bound_short_of_a_threshold_warns_one_line_per_side(tmp_path: Path) -> None:
    assert (
        threshold_warnings(
            load_spec(example("cartpole")), source_constants(reference("cartpole").env)
        )
        == []
    )
    spec_file = _short_bounds_spec(tmp_path)
    lines = threshold_warnings(load_spec(spec_file), source_constants(reference("cartpole").env))
    assert len(lines) == 2
    assert all("physics[2]" in line and "0.2094395102" in line for line in lines)
    assert "low = -0.2094" in lines[0] and "high = 0.2094" in lines[1]


def _short_bounds_spec(tmp_path: Path) -> Path:
    text = (example("cartpole") / "envport.toml").read_text()
    text = text.replace("0.20943951023931953", "0.2094")
    spec_file = tmp_path / "envport.toml"
    spec_file.write_text(text)
    for name in ("probes",):
        (tmp_path / name).symlink_to(example("cartpole") / name)
    return spec_file


@pytest.mark.slow
def test_verify_prints_the_warning_and_still_runs(tmp_path: Path) -> None:
    spec_file = _short_bounds_spec(tmp_path)
    port = example("cartpole") / "ports" / "numpy"
    done = run_envport(
        "verify", str(spec_file), "--port", str(port), "--levels", "l1", "--examples", "5"
    )
    assert done.returncode == 0, done.stdout + done.stderr
    warned = [line for line in done.stdout.splitlines() if line.startswith("warn spec:")]
    assert len(warned) == 2 and "widen it to include the threshold" in warned[0]


# ---- actions outside the declared space ----


def test_discrete_values_are_drawn_outside_only_where_the_reference_accepts_them() -> None:
    # Acrobot's AVAIL_TORQUE[a] takes Python's negative indices; CartPole asserts; Taxi's
    # transition table raises KeyError.
    assert action_range(reference("acrobot"), 3.0, 0.2).invalid == (-3, -2, -1)
    assert action_range(reference("cartpole"), 3.0, 0.2).invalid == ()
    assert not action_range(reference("taxi"), 3.0, 0.2).active


def test_box_actions_reach_three_half_widths_beyond_each_bound() -> None:
    pendulum = reference("pendulum")
    widened = action_range(pendulum, 3.0, 0.2)
    assert widened.low.tolist() == [-8.0] and widened.high.tolist() == [8.0]
    drawn: list[float] = []

    @settings(max_examples=300, database=None, derandomize=True)
    @given(action_strategy(pendulum.action_space, draws_for(pendulum.spec, pendulum)))
    def collect(action: np.ndarray) -> None:
        assert action.dtype == np.float32 and action.shape == (1,)
        drawn.append(float(action[0]))

    collect()
    values = np.asarray(drawn)
    assert values.min() >= -8.0 and values.max() <= 8.0
    outside = np.abs(values) > 2.0
    assert 0.05 < outside.mean() < 0.5, outside.mean()
    assert (values < -2.0).any() and (values > 2.0).any()
    # Edge draws: the clip's own limits, exactly.
    assert {-2.0, 2.0} <= set(drawn)
    # Off: only the declared space.
    inside: list[float] = []

    @settings(max_examples=100, database=None, derandomize=True)
    @given(action_strategy(pendulum.action_space, Draws()))
    def collect_inside(action: np.ndarray) -> None:
        inside.append(float(action[0]))

    collect_inside()
    assert max(abs(v) for v in inside) <= 2.0


def test_l3_policies_send_a_share_out_of_range_and_keep_the_rest() -> None:
    pendulum = reference("pendulum")
    space = pendulum.action_space
    widened = action_range(pendulum, 3.0, 0.2)
    plain = np.asarray(list(Planner(7).actions("uniform", space, 3, 2000)))
    mixed = np.asarray(list(Planner(7, outside=widened).actions("uniform", space, 3, 2000)))
    replaced = (plain != mixed)[:, 0]
    # About a fifth replaced (from the widened range, so a quarter of those land inside).
    assert 0.15 < replaced.mean() < 0.25
    assert np.abs(mixed).max() <= 8.0 and (np.abs(mixed) > 2.0).mean() > 0.1
    # The other steps are exactly the episode's in-range draws: a stream of their own.
    assert np.array_equal(plain[~replaced], mixed[~replaced])
    acrobot = reference("acrobot")
    actions = list(
        Planner(7, outside=action_range(acrobot, 3.0, 0.2)).actions(
            "sticky", acrobot.action_space, 0, 500
        )
    )
    assert {-3, -2, -1} <= set(actions) and all(isinstance(a, int) for a in actions)


# ---- landings: start states solved so the next state is at a constant ----


def test_a_landing_puts_the_next_state_where_its_kind_says() -> None:
    cartpole = reference("cartpole")
    spec = cartpole.spec
    start = {"physics": np.array([0.0, 1.0, 0.0, 0.0]), "elapsed_steps": np.array(3)}
    reached = {}
    for kind in ("above", "below", "+2e-6", "-2e-6"):
        landed = land(spec, cartpole, start, 1, Landing("physics", (0,), 2.4, kind), 0)
        assert landed is not None
        solved = landed.state
        assert solved["elapsed_steps"] == 3
        cartpole.reset(0)
        cartpole.write_state(solved)
        out = cartpole.step(1)
        reached[kind] = (float(cartpole.read_state()["physics"][0]), out.terminated)
    assert reached["above"] == (2.4, False)  # exactly at the threshold: not past it
    assert reached["below"][0] == np.nextafter(2.4, 0) and not reached["below"][1]
    assert reached["+2e-6"][0] == pytest.approx(2.4 * (1 + 2e-6), abs=1e-12)
    assert reached["+2e-6"][1] and not reached["-2e-6"][1]
    # A target no start within the bounds reaches is no landing.
    far = Landing("physics", (0,), 7.0, "above")
    assert land(spec, cartpole, start, 1, far, 0) is None


def test_only_outputs_undecidable_at_float32_resolution_are_excused() -> None:
    cartpole = reference("cartpole")
    spec = cartpole.spec
    start = {"physics": np.array([0.0, 1.0, 0.0, 0.0]), "elapsed_steps": np.array(3)}

    def undecided(kind: str) -> set[str]:
        landed = land(spec, cartpole, start, 1, Landing("physics", (0,), 2.4, kind), 0)
        assert landed is not None
        solved = landed.state
        cartpole.reset(0)
        cartpole.write_state(solved)
        expected = Steps.single(cartpole.step(1))

        def changed(moved: dict, transition: object, after: dict) -> set[str]:
            again = divergent_steps(spec, expected, Steps.single(transition), False, np.zeros(1))
            return {d.field for _, diffs in again for d in diffs}

        return unresolved(cartpole, solved, 1, 0, 0, changed)

    # At the threshold or one ulp short of it: a float32 port cannot tell the two apart.
    assert "terminated" in undecided("above") and "terminated" in undecided("below")
    # 2e-6 past it is 16 float32 ulps: every float32 port must end the episode there.
    assert "terminated" not in undecided("+2e-6")


def test_endings_at_the_limit_are_found_for_envs_that_terminate() -> None:
    cartpole = reference("cartpole")
    found = ending_starts(cartpole.spec, cartpole, [0, 1], seed=0)
    assert len(found) == 4
    for state, action in found:
        assert int(state["elapsed_steps"]) == 499
        cartpole.reset(0)
        cartpole.write_state(state)
        out = cartpole.step(action)
        assert out.terminated and out.truncated
    # Pendulum never terminates: nothing to construct, and the search gives up in budget.
    pendulum = reference("pendulum")
    low, high = pendulum.action_space.low, pendulum.action_space.high
    assert ending_starts(pendulum.spec, pendulum, [low, high], seed=0, budget=200) == []


@pytest.mark.slow
def test_the_continuous_test_port_verifies_with_actions_outside_its_space() -> None:
    report = verify(
        str(example("continuous")),
        str(example("continuous") / "ports" / "numpy"),
        VerifyOptions(target="numpy", episodes=10, steps=300),
    )
    assert report.passed, report.text()
    names = [level.name for level in report.levels]
    assert names == [
        "l1.transition",
        "l1.landings",
        "l2.reset",
        "l2.state_api",
        "l2.reset_after_play",
        "l2.vector",
        "l2.interaction",
        "l2.batch",
        "l2.sizes",
        "l3.free",
        "l3.resync",
        "l3.bounds",
        "l3.plain",
    ]


def test_batch_sizes_are_a_list_and_a_single_size_still_reads() -> None:
    assert L2Spec().batch == [1, 7, 33]
    assert L2Spec(batch=8).batch == [8]
    with pytest.raises(ValidationError, match="batch sizes >= 1"):
        L2Spec(batch=[4, 0])


def test_draws_for_a_discrete_space_without_accepted_values_stay_inside() -> None:
    cartpole = reference("cartpole")
    strategy = action_strategy(cartpole.action_space, draws_for(cartpole.spec, cartpole))
    seen: set[int] = set()

    @settings(max_examples=60, database=None, derandomize=True)
    @given(strategy)
    def collect(action: int) -> None:
        seen.add(action)

    collect()
    assert seen == {0, 1} and isinstance(cartpole.action_space, spaces.Discrete)


# ---- each mutant class caught, by the check built for it ----

# (example, mutant, levels run, the check that must catch it). Each is missed by the checks
# before these draws (see docs/verification.md, Mutation self-check), except the partial
# chunk, which L3's resync batches met too.
CAUGHT = [
    ("cartpole", "numpy-x-threshold-5th-digit", ("l1",), "l1.landings"),
    ("cartpole", "jax-theta-threshold-rounded", ("l1",), "l1.landings"),
    ("mountaincar", "numpy-wall-isclose", ("l1",), "l1.landings"),
    ("mountaincar", "jax-wall-epsilon", ("l1",), "l1.landings"),
    ("pendulum", "numpy-torque-unclipped", ("l1",), "l1.transition"),
    ("pendulum", "jax-torque-unclipped", ("l1",), "l1.transition"),
    ("pendulum", "numpy-cost-before-clip", ("l1",), "l1.transition"),
    ("acrobot", "jax-torque-arithmetic", ("l1",), "l1.transition"),
    # MountainCarContinuous charges the raw action: the reverse of Pendulum's clip.
    ("continuous", "numpy-reward-on-clipped-force", ("l1",), "l1.transition"),
    ("continuous", "numpy-force-unclipped", ("l1",), "l1.transition"),
    ("mountaincar", "jax-truncated-unless-terminated", ("l2",), "l2.interaction"),
    ("taxi", "numpy-truncated-unless-terminated", ("l2",), "l2.interaction"),
    ("cartpole", "numpy-partial-chunk", ("l2",), "l2.batch"),
]


@pytest.mark.slow
@pytest.mark.parametrize(
    "name, mutant_id, levels, check", CAUGHT, ids=[f"{c[0]}-{c[1]}" for c in CAUGHT]
)
def test_each_new_mutant_is_caught_by_its_check(
    name: str, mutant_id: str, levels: tuple[str, ...], check: str, tmp_path: Path
) -> None:
    mutant = next(m for m in load_mutants(example(name)) if m.id == mutant_id)
    port = apply_mutant(mutant, example(name) / "ports" / mutant.target, tmp_path / "port")
    options = VerifyOptions(target=mutant.target, levels=levels, shrink=False)
    if levels == ("l1",):
        options.examples = 60  # landings do not depend on it; out-of-range draws need few
    report = verify(str(example(name)), str(port), options)
    failed = {level.name: level for level in report.levels if not level.passed}
    assert check in failed, report.text()
    divergence = failed[check].divergences[0]
    assert divergence.replay.startswith("envport verify")
    if name == "pendulum":
        # The torque that told is outside the declared [-2, 2].
        assert abs(divergence.start_state["action"][0]) > 2.0
    if name == "continuous":
        assert abs(divergence.start_state["action"][0]) > 1.0
    if check == "l2.batch":
        assert "of a batch of 33" in divergence.message
    if "truncated-unless" in mutant_id:
        assert "one step from ending both ways" in divergence.message
        assert [f.field for f in divergence.fields] == ["truncated"]


def test_a_collection_is_drawn_at_its_edges_as_a_whole() -> None:
    """Breakout's 100 brick cells drawn one by one are never all empty (one draw in 2^100);
    a share of draws takes the whole map to an edge: empty, full, one brick, one gap."""
    from envport.verifiers.draws.strategies import state_strategy

    spec = load_spec(ROOT / "examples" / "minatar_breakout")
    seen: list[int] = []

    @settings(max_examples=300, database=None, derandomize=True)
    @given(state_strategy(spec, Draws(edge_share=0.25)))
    def draw(state: dict[str, np.ndarray]) -> None:
        seen.append(int(np.count_nonzero(state["brick_map"])))

    draw()
    size = np.asarray(spec.state.bounds["brick_map"].low).size
    assert {0, 1, size - 1, size} <= set(seen), sorted(set(seen))
    # The rest are still drawn component by component (about half the cells set).
    assert sum(1 for count in seen if 20 < count < 80) > len(seen) / 2
