"""The MiniGrid examples (Empty-8x8, DoorKey-5x5): the state bridge, every known-good port
verifying L1-L3, the mutants' edits, the hand-written sessions translating offline, and the
report's grid pictures.

`envport verify examples/minigrid_<name> --port examples/minigrid_<name>/ports/<target>`
runs the full budgets; `python benchmarks/mutation_check.py examples/minigrid_<name>` the
mutants.
"""

from __future__ import annotations

import dataclasses
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
from envport.verifiers.reporting.compare import Steps, divergent_steps
from envport.verifiers.reporting.divergence import GridPicture
from envport.verifiers.reporting.states import field_diffs
from envport.verifiers.selfcheck import apply_mutant, known_good_port, load_mutants
from envport.verifiers.verify import VerifyOptions, verify

from helpers import ROOT, Tables, check_failures, translated_offline

EMPTY = ROOT / "examples" / "minigrid_empty"
DOORKEY = ROOT / "examples" / "minigrid_doorkey"


def test_the_bridge_reads_back_what_minigrid_makes_of_a_drawn_state() -> None:
    reference = Reference(load_spec(DOORKEY))
    reference.reset(3)
    state = reference.read_state()
    assert state["grid"].shape == (5, 5, 3) and state["carrying"].tolist() == [1, 0, 0]
    grid = state["grid"].copy()
    grid[1, 1] = [8, 4, 2]  # a goal drawn yellow, with a door's state
    grid[2, 2] = [2, 0, 1]  # a red wall, with a state
    grid[3, 1] = [4, 2, 2]  # a locked blue door
    reference.write_state({**state, "grid": grid.reshape(-1), "carrying": np.array([5, 4, 0])})
    back = reference.read_state()
    # minigrid's own decoding: a goal is always green, only doors keep a state.
    assert back["grid"][1, 1].tolist() == [8, 1, 0]
    assert back["grid"][2, 2].tolist() == [2, 0, 0]
    assert back["grid"][3, 1].tolist() == [4, 2, 2]
    assert back["carrying"].tolist() == [5, 4, 0]


# The default tier verifies one grid port (Empty, NumPy); the rest are in the full tier.
@pytest.mark.parametrize(
    ("example", "target"),
    [
        pytest.param(EMPTY, "numpy", id="empty-numpy"),
        pytest.param(EMPTY, "jax", id="empty-jax", marks=pytest.mark.slow),
        pytest.param(DOORKEY, "numpy", id="doorkey-numpy", marks=pytest.mark.slow),
        pytest.param(DOORKEY, "jax", id="doorkey-jax", marks=pytest.mark.slow),
    ],
)
def test_known_good_ports_verify(example: Path, target: str) -> None:
    # Budgets cut to keep the suite fast (JAX compiles every batch shape it meets); every
    # check and probe still runs, the rules.facing_door probe included.
    options = VerifyOptions(target=target, examples=40, episodes=20)
    report = verify(str(example), str(example / "ports" / target), options)
    assert report.passed, report.text()
    assert {level.level for level in report.levels} == {"l1", "l2", "l3"}


@pytest.mark.parametrize("example, least", [(EMPTY, 15), (DOORKEY, 15)])
def test_mutant_edits_apply_exactly_once(example: Path, least: int, tmp_path: Path) -> None:
    mutants = load_mutants(example)
    assert len({m.id for m in mutants}) == len(mutants) >= least
    assert {m.target for m in mutants} == {"jax", "numpy"}
    for mutant in mutants:
        port = apply_mutant(mutant, known_good_port(example, mutant.target), tmp_path / mutant.id)
        assert mutant.new in (port / mutant.file).read_text()


def test_the_grid_view_marks_differing_cells_and_the_agent() -> None:
    codes = {
        "type": ["unseen", "empty", "wall", "floor", "door", "key"],
        "state": ["open", "closed", "locked"],
    }
    wall, empty, door = [2, 5, 0], [1, 0, 0], [4, 4, 2]
    want = [[wall, wall, wall], [wall, door, wall], [wall, empty, wall]]
    got = [[wall, wall, wall], [wall, [4, 4, 0], wall], [wall, empty, wall]]
    picture = GridPicture(
        field="grid",
        channels=["type", "colour", "state"],
        codes=codes,
        expected=want,
        actual=got,
        marker_expected=[2, 1],
        marker_actual=[2, 1],
    )
    view = grid_view(picture)
    assert view is not None and view.differing == 1
    # Rows are y, columns x: grid[1][1] is row 1, column 1.
    assert view.reference[1][1].label == "DL" and view.port[1][1].label == "D_"
    assert view.reference[1][1].differs and not view.reference[0][1].differs
    assert view.reference[1][2].marked and view.port[1][2].marked
    assert view.reference[1][1].title == "grid[1][1] = type door, colour 4, state locked"


def test_a_grid_divergence_names_the_cell_channel_and_codes() -> None:
    spec = load_spec(DOORKEY)
    reference = Reference(spec)
    reference.reset(0)
    want = reference.read_state()
    grid = want["grid"].copy()
    grid[2, 1] = [4, 4, 2]  # a locked yellow door
    want = {**want, "grid": grid}
    got_grid = grid.copy()
    got_grid[2, 1, 2] = 0  # the port opened it
    got_grid[3, 3, 0] = 5  # and put a key where the reference has something else
    want["carrying"] = np.array([5, 4, 0])  # a yellow key in hand
    held = np.array([6, 4, 0])  # where the port holds a yellow ball
    diffs = field_diffs(spec, want, {**want, "grid": got_grid, "carrying": held})
    shown = {d.field: (d.expected, d.actual) for d in diffs}
    assert shown["grid[2][1].state"] == ("door(locked)", "door(open)")
    assert shown["grid[3][3].type"][1] == "key"
    # A field holding one cell (`state.cells`) reads by channel too, not `carrying[0]: 5, 6`.
    assert shown["carrying.type"] == ("key", "ball")
    # The first differing cell carries both whole grids for the report's picture.
    assert diffs[0].picture is not None and diffs[0].picture.field == "grid"


def test_an_observation_divergence_names_the_view_cell_channel_and_codes() -> None:
    """The 7x7x3 view is declared `[observation.grid]`: a step's differing obs components
    read by cell and channel with code names, not as flat indices."""
    spec = load_spec(DOORKEY)
    reference = Reference(spec)
    want = reference.reset(0)
    got = want.copy()
    view = got[: 7 * 7 * 3].reshape(7, 7, 3)
    view[3, 5] = [4, 4, 0]  # the port shows an open yellow door in front of the agent
    want_view = want[: 7 * 7 * 3].reshape(7, 7, 3).copy()
    want_view[3, 5] = [4, 4, 2]  # where the reference shows it locked
    want = np.concatenate([want_view.reshape(-1), want[7 * 7 * 3 :]])
    expected, actual = Steps(want[None], *[np.zeros(1)] * 3), Steps(got[None], *[np.zeros(1)] * 3)
    ((_, diffs),) = divergent_steps(spec, expected, actual, False, np.asarray([0]))
    shown = {d.field: (d.expected, d.actual) for d in diffs}
    assert shown == {"obs[3][5].state": ("door(locked)", "door(open)")}, shown
    assert diffs[0].picture is not None and diffs[0].picture.field == "obs"


@pytest.mark.slow
def test_a_port_covering_part_of_the_state_space_verifies_on_its_declared_domain(
    tmp_path: Path,
) -> None:
    """A port whose hand holds a key or nothing (as NAVIX's holds one key at most) fails on
    drawn states carrying a ball; declared as its domain, it is verified on the rest, and the
    report says so."""
    copy = tmp_path / "doorkey"
    shutil.copytree(DOORKEY, copy, ignore=shutil.ignore_patterns("replay", "__pycache__"))
    env = copy / "ports" / "numpy" / "env.py"
    old = "        self.needs_reset = np.zeros(self.num_envs, dtype=bool)\n\n    def get_state"
    assert env.read_text().count(old) == 1
    env.write_text(
        env.read_text().replace(
            old,
            "        holds_key = self.carrying[:, :1] == 5\n"
            "        self.carrying = np.where(holds_key, self.carrying, np.array([1, 0, 0]))\n"
            + old,
        )
    )
    options = VerifyOptions(target="numpy", levels=("l1", "l2"), examples=150)
    # Failing is all the first run must show: its first failure ends it, unshrunk.
    first = dataclasses.replace(options, fail_fast=True, shrink=False)
    before = verify(str(copy), str(copy / "ports" / "numpy"), first)
    assert not before.passed and not before.restricted_to
    spec = copy / "envport.toml"
    spec.write_text(
        spec.read_text().replace(
            "[targets.numpy]\n", '[targets.numpy]\ndomain = ["carrying[0] in (1, 5)"]\n', 1
        )
    )
    after = verify(str(copy), str(copy / "ports" / "numpy"), options)
    assert after.passed, after.text()
    assert after.restricted_to == ["carrying[0] in (1, 5)"]
    assert "restricted: L1 and L2 drew only states in the port's declared domain" in after.text()


def fast_copy(source: Path, destination: Path, l1_examples: int = 200) -> Path:
    copy = destination / source.name
    shutil.copytree(source, copy, ignore=shutil.ignore_patterns("ports", "__pycache__"))
    if source == EMPTY:
        # The variant's `base = "../minigrid_doorkey"` must find its base beside the copy.
        ignored = shutil.ignore_patterns("ports", "replay", "__pycache__")
        shutil.copytree(DOORKEY, destination / DOORKEY.name, ignore=ignored)
    spec = copy / "envport.toml"
    text = spec.read_text()
    for pattern, value in (("l1", l1_examples), ("l2", 10), ("l3", 10)):
        key = "examples" if pattern != "l3" else "episodes"
        text, count = re.subn(rf"(\[levels\.{pattern}\]\n{key} = )\d+", rf"\g<1>{value}", text)
        assert count == 1, pattern
    spec.write_text(text)
    return copy


@pytest.mark.parametrize("example, target", [(EMPTY, "jax"), (DOORKEY, "numpy")])
def test_the_sessions_are_labelled_hand_written(example: Path, target: str) -> None:
    session = read_session(example / "replay" / target)
    assert session.entries and {e.source for e in session.entries} == {"hand-written"}


def first_failure(run: Path) -> str:
    return next(iter(check_failures(run)), "")


@pytest.mark.slow
def test_empty_translates_to_jax_offline(tmp_path: Path) -> None:
    run = translated_offline(fast_copy(EMPTY, tmp_path, l1_examples=40), "jax", tmp_path / "runs")
    # The session's first rules module turns the wrong way; L1's probe said so.
    assert "agent_dir" in first_failure(run)
    # The variant's run holds the bridge it took from its base, and its frozen spec names no
    # base: a resumed run reads nothing of the examples folder.
    frozen = load_spec(run / "envport.toml")
    assert frozen.base is None and frozen.folders == (run.resolve(),)
    bridge = DOORKEY / "harness" / "reference.py"
    assert (run / "harness" / "reference.py").read_bytes() == bridge.read_bytes()
    assert '# base = "../minigrid_doorkey"' in (run / "envport.toml").read_text()


@pytest.mark.slow
def test_doorkey_translates_offline_and_the_report_draws_both_grids(tmp_path: Path) -> None:
    # The spec's own 400 L1 examples: the slip needs a full hand facing a pickable object.
    run = translated_offline(
        fast_copy(DOORKEY, tmp_path, l1_examples=400), "numpy", tmp_path / "runs"
    )

    # The session's rules module picks up with a full hand: L1's probe shows it on the grid.
    parser = Tables()
    parser.feed((run / "reports" / "report.html").read_text())
    grids = [t for t in parser.tables if t["field"] == "grid"]
    assert [t["side"] for t in grids[:2]] == ["reference", "port"]
    reference, port = grids[0]["rows"], grids[1]["rows"]
    assert len(reference) == len(port) == 5 and all(len(row) == 5 for row in reference + port)
    differing = [cell for row in port for cell in row if "differs" in cell[0]]
    assert differing and all("type empty" in title for _, title in differing)
    assert any("marked" in cell[0] for row in reference for cell in row)


def test_a_missing_reference_harness_file_is_one_spec_error(tmp_path: Path) -> None:
    copy = tmp_path / "spec"
    shutil.copytree(DOORKEY, copy, ignore=shutil.ignore_patterns("ports", "replay"))
    (copy / "harness" / "reference.py").unlink()
    with pytest.raises(SpecError, match=r"key `reference.entry`: harness file .* does not exist"):
        Reference(load_spec(copy))
