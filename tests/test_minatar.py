"""The MinAtar Breakout example: its state bridge, the reference's determinism with and
without sticky actions, the known-good NumPy and JAX ports verifying L1-L3, the mutants'
edits, and the rule no check reaches yet (issue 34).

`envport verify examples/minatar_breakout --port examples/minatar_breakout/ports/<target>`
runs the full budgets.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from envport.errors import SpecError
from envport.llm.replay import read_session
from envport.report.grids import grid_view
from envport.spec import load_spec
from envport.targets.reference import Reference
from envport.verifiers.coverage.determinism import check_reference_determinism
from envport.verifiers.reporting.compare import Steps, divergent_steps
from envport.verifiers.reporting.states import field_diffs
from envport.verifiers.selfcheck import apply_mutant, load_mutants, replay, same_divergence
from envport.verifiers.verify import VerifyOptions, verify

from helpers import ROOT, Tables, check_failures, run_envport, translated_offline

BREAKOUT = ROOT / "examples" / "minatar_breakout"
NUMPY = BREAKOUT / "ports" / "numpy"


def _last_brick_gone(reference: Reference, ball_x: int, pos: int) -> dict:
    """A state one step before the ball comes down to the paddle's row with no brick left."""
    reference.reset(0)
    state = reference.read_state()
    bricks = np.zeros((10, 10), dtype=np.int64)
    return {
        **state,
        "ball_x": np.int64(ball_x),
        "ball_y": np.int64(8),
        "ball_dir": np.int64(2),  # down-right
        "pos": np.int64(pos),
        "brick_map": bricks.reshape(-1),  # drawn maps arrive flat
    }


def test_the_bridge_round_trips_a_drawn_state_and_the_board_refills() -> None:
    reference = Reference(load_spec(BREAKOUT))
    drawn = _last_brick_gone(reference, ball_x=4, pos=4)
    drawn["strike"] = np.bool_(True)
    reference.write_state(drawn)
    back = reference.read_state()
    assert back["brick_map"].shape == (10, 10) and not back["brick_map"].any()
    assert bool(back["strike"]) and int(back["ball_y"]) == 8
    # The rule issue 34's port missed, in the reference itself: the ball reaching the
    # paddle's row with no brick left lays rows 1..3 again, and the paddle under it returns it.
    step = reference.step(0)
    after = reference.read_state()
    assert after["brick_map"][1:4].all() and after["brick_map"].sum() == 30
    assert not step.terminated and int(after["ball_dir"]) == 1  # bounced up-right
    assert step.obs.shape == (10, 10, 4) and step.obs[..., 3].sum() == 30


def test_the_reference_is_deterministic_with_sticky_actions_off() -> None:
    spec = load_spec(BREAKOUT)
    check_reference_determinism(spec, Reference(spec), 0)


# MinAtar's default 0.1 as well: each measured step follows a step with an action of its own,
# so a sticky repeat shows (with one warm-up action for both, 9 seeds of 10 passed at 0.1).
@pytest.mark.parametrize("sticky", ["0.1", "0.5"])
def test_minatars_default_sticky_actions_are_named_as_the_references_own_randomness(
    tmp_path: Path, sticky: str
) -> None:
    copy = tmp_path / "sticky"
    shutil.copytree(BREAKOUT, copy, ignore=shutil.ignore_patterns("ports", "__pycache__"))
    toml = copy / "envport.toml"
    text = toml.read_text()
    assert text.count("sticky_action_prob = 0.0") == 1
    toml.write_text(text.replace("sticky_action_prob = 0.0", f"sticky_action_prob = {sticky}"))
    spec = load_spec(copy)
    with pytest.raises(SpecError) as caught:
        check_reference_determinism(spec, Reference(spec), 0)
    message = str(caught.value)
    assert message.startswith("the reference is not deterministic from an injected state")
    # The game's own RandomState, found on the env, and the first differing component.
    assert "`env.env.env.game.random`" in message and "\n" not in message, message
    named = re.search(r"gave (obs|state\.\w+)(\[[0-9, ]+\])?: (True|False|\d+) then ", message)
    assert named, message


def test_mutant_edits_apply_exactly_once(tmp_path: Path) -> None:
    mutants = load_mutants(BREAKOUT)
    assert len({m.id for m in mutants}) == len(mutants) >= 8
    assert {m.target for m in mutants} == {"jax", "numpy"}
    for mutant in mutants:
        port = apply_mutant(mutant, BREAKOUT / "ports" / mutant.target, tmp_path / mutant.id)
        assert mutant.new in (port / mutant.file).read_text()


def test_a_screen_divergence_names_the_cell_and_plane_and_draws_both_screens() -> None:
    """MinAtar's observation is declared a grid of planes, rows first: a differing component
    reads `obs[row][column].plane`, set or clear, and carries both screens for the report,
    drawn as the game shows them (row 0 at the top)."""
    spec = load_spec(BREAKOUT)
    reference = Reference(spec)
    want = reference.reset(0).astype(bool)
    screen = want.reshape(10, 10, 4)
    (rows, columns) = np.nonzero(screen[:, :, 1])  # where the ball is
    row, column = int(rows[0]), int(columns[0])
    got = screen.copy()
    got[row, column, 1] = False  # the port lost the ball
    got[row, 9 - column, 1] = True  # and drew it at the mirrored column
    expected = Steps(want[None], *[np.zeros(1)] * 3)
    actual = Steps(got.reshape(-1)[None], *[np.zeros(1)] * 3)
    ((_, diffs),) = divergent_steps(spec, expected, actual, False, np.asarray([0]))
    shown = {d.field: (d.expected, d.actual) for d in diffs}
    assert shown == {
        f"obs[{row}][{column}].ball": ("set", "clear"),
        f"obs[{row}][{9 - column}].ball": ("clear", "set"),
    }, shown
    picture = diffs[0].picture
    assert picture is not None and picture.planes and picture.axes == "yx"
    view = grid_view(picture)
    assert view is not None and view.differing == 2
    # Drawn rows first: the table's row `row` is the screen's row, its cell the column.
    assert view.reference[row][column].differs and "ball" in view.reference[row][column].title
    assert view.reference[row][column].label.startswith("ba")
    assert "ball" not in view.port[row][column].title
    assert "ball" in view.port[row][9 - column].title


def test_the_brick_map_is_drawn_rows_first_at_a_state_divergence() -> None:
    spec = load_spec(BREAKOUT)
    reference = Reference(spec)
    reference.reset(0)
    want = reference.read_state()
    bricks = np.asarray(want["brick_map"]).reshape(10, 10).copy()
    got = bricks.copy()
    got[2, 7] = 0  # a brick of row 2 missing in the port
    diffs = field_diffs(spec, {**want, "brick_map": bricks}, {**want, "brick_map": got})
    assert [d.field for d in diffs] == ["brick_map[2][7]"]
    picture = diffs[0].picture
    assert picture is not None and picture.axes == "yx" and not picture.planes
    view = grid_view(picture)
    assert view is not None and view.differing == 1
    assert view.port[2][7].differs and view.port[2][7].title == "brick_map[2][7] = 0"
    assert view.reference[2][7].title == "brick_map[2][7] = 1"


# Issue 34's missed rule, as a mutant of the known-good port: the board is never laid again
# when the last brick goes. No level reaches an empty board; the exploration does.
NO_REFILL = next(m for m in load_mutants(BREAKOUT) if m.id == "numpy-no-refill")


@pytest.mark.slow
def test_a_port_that_never_refills_the_board_is_caught_by_exploration(tmp_path: Path) -> None:
    port = apply_mutant(NO_REFILL, NUMPY, tmp_path / NO_REFILL.id)
    report = verify(str(BREAKOUT), str(port), VerifyOptions(target="numpy", shrink=False))
    failed = [level.name for level in report.levels if not level.passed]
    assert failed == ["l3.explore"], report.text()
    # Before it: every level passed, and the refill was the branch none of them took.
    explored = next(level for level in report.levels if level.name == "l3.explore")
    divergence = explored.divergences[0]
    assert "a branch no level reached" in divergence.message
    assert "--cases" in divergence.replay and "--explore-steps 0" in divergence.replay
    # The replay line shows it again: the same rollout, step and fields, played as a case
    # (the mutation self-check called it a different divergence, as a case's label).
    again = replay(divergence)
    assert again is not None and again.level == "cases"
    assert (again.episode, again.step) == (divergence.episode, divergence.step)
    assert same_divergence(divergence, again)
    assert report.coverage is not None and report.coverage.missed == []
    # Without the exploration the same port passes, and the verdict names the rule missed.
    quiet = verify(
        str(BREAKOUT), str(port), VerifyOptions(target="numpy", shrink=False, explore_steps=0)
    )
    assert not quiet.diverged
    assert quiet.coverage is not None
    assert any("count_nonzero(self.brick_map)==0" in b.source for b in quiet.coverage.missed)
    assert any("never exercised" in line for line in quiet.text().splitlines())


# SpaceInvaders: no randomness in the game, and a difficulty ramp kept in the state.
SPACE_INVADERS = ROOT / "examples" / "minatar_space_invaders"


def _last_alien_over_a_bullet(reference: Reference, interval: int) -> dict:
    """A state one step before the cannon's bullet meets the screen's last alien, with the
    aliens' march interval at `interval` (6 is the ramp's floor)."""
    reference.reset(0)
    state = reference.read_state()
    aliens = np.zeros((10, 10), dtype=np.int64)
    aliens[2, 4] = 1
    bullets = np.zeros((10, 10), dtype=np.int64)
    bullets[3, 4] = 1  # rises to row 2 this step
    return {
        **state,
        "alien_map": aliens.reshape(-1),  # drawn maps arrive flat
        "f_bullet_map": bullets.reshape(-1),
        "enemy_move_interval": np.int64(interval),
        "ramp_index": np.int64(12 - interval),
        "alien_move_timer": np.int64(3),
        "alien_shot_timer": np.int64(4),
    }


@pytest.mark.parametrize(("interval", "faster"), [(7, 1), (6, 0)])
def test_space_invaders_bridge_round_trips_and_the_ramp_speeds_the_next_wave(
    interval: int, faster: int
) -> None:
    reference = Reference(load_spec(SPACE_INVADERS))
    drawn = _last_alien_over_a_bullet(reference, interval)
    reference.write_state(drawn)
    back = reference.read_state()
    assert back["alien_map"].shape == (10, 10) and int(back["alien_map"].sum()) == 1
    assert int(back["enemy_move_interval"]) == interval
    step = reference.step(0)
    after = reference.read_state()
    assert step.reward == 1.0 and not step.terminated
    # The wave cleared: a new 4x6 block, and one step sooner per march until the floor.
    assert after["alien_map"][0:4, 2:8].all() and int(after["alien_map"].sum()) == 24
    assert not after["f_bullet_map"].any()
    assert int(after["enemy_move_interval"]) == interval - faster
    assert int(after["ramp_index"]) == 12 - interval + faster
    assert step.obs.shape == (10, 10, 6) and int(step.obs[..., 1].sum()) == 24


def test_space_invaders_reference_is_deterministic_and_its_resets_all_alike() -> None:
    spec = load_spec(SPACE_INVADERS)
    reference = Reference(spec)
    check_reference_determinism(spec, reference, 0)
    # No randomness in the game: any seed gives the same start.
    assert np.array_equal(reference.reset(0), reference.reset(12345))


def test_space_invaders_mutant_edits_apply_exactly_once(tmp_path: Path) -> None:
    mutants = load_mutants(SPACE_INVADERS)
    assert len({m.id for m in mutants}) == len(mutants) >= 10
    assert {m.target for m in mutants} == {"jax", "numpy"}
    for mutant in mutants:
        port = apply_mutant(mutant, SPACE_INVADERS / "ports" / mutant.target, tmp_path / mutant.id)
        assert mutant.new in (port / mutant.file).read_text()
        assert mutant.old not in (port / mutant.file).read_text()


@pytest.mark.slow
@pytest.mark.parametrize("target", ["numpy", "jax"])
@pytest.mark.parametrize("game", ["breakout", "space_invaders"])
def test_the_known_good_ports_verify(game: str, target: str) -> None:
    example = {"breakout": BREAKOUT, "space_invaders": SPACE_INVADERS}[game]
    # Budgets cut to keep the tier's time; every check and probe still runs.
    options = VerifyOptions(target=target, examples=60, episodes=30)
    report = verify(str(example), str(example / "ports" / target), options)
    assert report.passed, report.text()
    assert {level.level for level in report.levels} == {"l1", "l2", "l3"}
    # Every branch of the game's step taken (Breakout's refill by l3.explore), the ones out
    # of scope aside.
    assert report.coverage is not None and report.coverage.missed == [], report.text()


def test_a_grid_of_planes_names_its_planes_and_takes_no_codes(tmp_path: Path) -> None:
    copy = tmp_path / BREAKOUT.name
    shutil.copytree(BREAKOUT, copy, ignore=shutil.ignore_patterns("__pycache__", "ports"))
    spec = copy / "envport.toml"
    text = spec.read_text()
    spec.write_text(
        text.replace("planes = true\n", 'planes = true\ncodes = { ball = ["no", "yes"] }\n')
    )
    with pytest.raises(SpecError, match="a grid of `planes` names each plane in `channels`"):
        load_spec(copy)


def test_the_breakout_session_is_labelled_hand_written() -> None:
    session = read_session(BREAKOUT / "replay" / "numpy")
    assert session.entries and all(e.source == "hand-written" for e in session.entries)


@pytest.mark.slow
def test_breakout_translates_offline_and_the_report_draws_both_screens(tmp_path: Path) -> None:
    """The session's rules never lay the board again (the slip a real model made): no module
    check sees it, the composed check's exploration reaches a cleared board, the repair
    adds the refill, and the HTML report draws both screens, rows first, where they part."""
    run = translated_offline(BREAKOUT, "numpy", tmp_path / "runs", timeout=900)
    failed = check_failures(run)
    assert (failed and "l3.explore" in failed[0]) or "branch" in failed[0], failed
    parser = Tables()
    parser.feed((run / "reports" / "report.html").read_text())
    screens = [t for t in parser.tables if t["field"] == "obs"]
    assert [t["side"] for t in screens[:2]] == ["reference", "port"]
    reference, port = screens[0]["rows"], screens[1]["rows"]
    assert len(reference) == len(port) == 10 and all(len(row) == 10 for row in reference + port)
    # Where they part is the bricks: the reference laid rows 1..3 again, the port did not.
    differing = [
        (y, title) for y, row in enumerate(reference) for cls, title in row if "differs" in cls
    ]
    assert differing and all(1 <= y <= 3 and "brick" in title for y, title in differing)


@pytest.mark.slow
def test_a_rule_no_check_reached_is_the_runs_gap_not_a_silent_pass(tmp_path: Path) -> None:
    """With the exploration off, the session's first port (no refill) passes every level; the
    run's verdict must still say that the refill was never exercised: the module checks ran
    L1 and the composed check L2 and L3, so together they answer for the reference's rules."""
    copy = tmp_path / BREAKOUT.name
    shutil.copytree(BREAKOUT, copy, ignore=shutil.ignore_patterns("ports", "__pycache__"))
    spec = copy / "envport.toml"
    spec.write_text(spec.read_text().replace("[coverage]\n", "[coverage]\nexplore_steps = 0\n", 1))
    out = tmp_path / "runs"
    done = run_envport("translate", str(copy), "--target", "numpy", "--out", str(out), timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "verified with gaps" in done.stdout, done.stdout
    (run,) = out.iterdir()
    state = json.loads((run / "run.json").read_text())
    assert any("count_nonzero(self.brick_map)==0" in json.dumps(gap) for gap in state["gaps"])


# Two conditions in either order: every branch exit is taken with the corner tested first;
# only the two tests true together tell the orders apart, which condition coverage counts
# and the exploration steers to.
@pytest.mark.slow
def test_a_port_testing_the_paddles_corner_first_is_caught_where_both_hold(
    tmp_path: Path,
) -> None:
    mutant = next(m for m in load_mutants(BREAKOUT) if m.id == "numpy-paddle-corner-before-top")
    port = apply_mutant(mutant, NUMPY, tmp_path / mutant.id)
    report = verify(str(BREAKOUT), str(port), VerifyOptions(target="numpy", shrink=False))
    failed = [level.name for level in report.levels if not level.passed]
    assert failed == ["l3.explore"], report.text()
    message = next(level for level in report.levels if not level.passed).divergences[0].message
    assert "`self.ball_x == self.pos` and `new_x == self.pos` true together" in message
