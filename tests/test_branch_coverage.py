"""Branch coverage of the reference's source, and the exploration that reaches what play
does not (envport.verifiers.coverage.branches, envport.verifiers.explore)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from envport.spec import load_spec
from envport.targets import rule_trace
from envport.targets.reference import Reference
from envport.verifiers.coverage.branches import Measure, analyse
from envport.verifiers.coverage.cells import CellKeys
from envport.verifiers.explore import Search
from envport.verifiers.options import L3Options

from helpers import ROOT

SPEC = """\
name = "bricks"

[reference]
entry = "bricks_env:make"
kwargs = {{ hard = false }}

[state]
fields = {{ bricks = "unwrapped.bricks", lives = "unwrapped.lives" }}

[state.bounds]
bricks = {{ low = 0, high = 1, integer = true }}
lives = {{ low = 1, high = 3, integer = true }}

[targets.numpy]
entry = "env"
{extra}
"""
REFILL = "if not self.bricks.any():"


def _reference(tmp_path: Path, extra: str = "") -> Reference:
    folder = tmp_path / "bricks"
    folder.mkdir()
    (folder / "envport.toml").write_text(SPEC.format(extra=extra))
    return Reference(load_spec(folder))


def _play_from_resets(reference: Reference, measure: Measure, steps: int) -> None:
    """Uniform play from resets, as L3 plays: three misses end an episode."""
    rng = np.random.default_rng(0)
    measure.start("l3")
    reference.reset(0)
    for _ in range(steps):
        if reference.step(int(rng.integers(12))).terminated:
            reference.reset(None)
    measure.stop()


def test_a_branch_play_never_takes_is_listed_with_file_line_and_source(tmp_path: Path) -> None:
    reference = _reference(tmp_path)
    measure = Measure.of(reference.spec, reference.env)
    assert measure is not None and measure.files[0].endswith("bricks_env.py")
    _play_from_resets(reference, measure, 400)
    found = analyse(measure, reference.spec)
    (missed,) = found.missed
    assert missed.file.endswith("bricks_env.py") and missed.source == REFILL
    assert missed.never == "never true"
    assert found.covered == found.total - 1 and found.levels == {"l3": found.covered}
    (gap,) = found.gaps()
    assert f"bricks_env.py:{missed.line} `{REFILL}` never true" in gap.line()
    # The HTML report's source: the refill line marked as a branch missed.
    lines = {line.number: line for line in found.sources[missed.file]}
    assert lines[missed.line].mark == "partial"


def test_a_spec_marks_a_branch_out_of_scope_by_its_source_text(tmp_path: Path) -> None:
    extra = (
        '[coverage]\nout_of_scope = [{ line = "not self.bricks.any()", why = "tested alone" },'
        ' { line = "if self.gone:", why = "renamed" }]\n'
    )
    reference = _reference(tmp_path, extra)
    measure = Measure.of(reference.spec, reference.env)
    assert measure is not None
    _play_from_resets(reference, measure, 400)
    found = analyse(measure, reference.spec)
    assert found.missed == [] and found.gaps() == []
    assert [b.out_of_scope for b in found.excluded if b.source == REFILL] == ["tested alone"]
    assert found.stale == ["`if self.gone:`"]
    assert found.covered == found.total


def test_a_setting_only_init_assigns_is_out_of_scope_by_default(tmp_path: Path) -> None:
    """`self.hard` comes from the spec's kwargs: no step can change which way it goes."""
    reference = _reference(tmp_path)
    measure = Measure.of(reference.spec, reference.env)
    assert measure is not None
    _play_from_resets(reference, measure, 400)
    found = analyse(measure, reference.spec)
    (setting,) = [b for b in found.excluded if "self.hard" in b.source]
    assert setting.out_of_scope is not None and "`self.hard`" in setting.out_of_scope


def test_the_tracer_runs_only_inside_reference_calls(tmp_path: Path) -> None:
    reference = _reference(tmp_path)
    measure = Measure.of(reference.spec, reference.env)
    assert measure is not None
    before = sys.gettrace()
    measure.start("l1")
    try:
        assert sys.gettrace() is before  # the verifier's own work runs untraced
        with rule_trace.reference_call():
            assert sys.gettrace() is measure.tracer
        assert sys.gettrace() is before
    finally:
        measure.stop()
    assert sys.gettrace() is before


def test_exploration_reaches_the_rule_play_from_resets_does_not(tmp_path: Path) -> None:
    reference = _reference(tmp_path)
    measure = Measure.of(reference.spec, reference.env)
    assert measure is not None
    _play_from_resets(reference, measure, 3000)
    assert [b.source for b in analyse(measure, reference.spec).missed] == [REFILL]
    measure.start("explore")
    search = Search(reference.spec, reference, measure, seed=0)
    kept = search.run(budget=3000, horizon=20)
    measure.stop()
    found = analyse(measure, reference.spec)
    assert found.missed == [] and found.levels["explore"] > 0
    # The kept rollout that refilled starts from a state with few bricks left.
    refills = [p for p in kept if (p.steps.reward >= 5).any()]
    assert refills and int(refills[0].states["bricks"][0].sum()) < 12
    assert search.steps <= 3000


def test_exploration_stops_after_a_thousand_rollouts_with_nothing_new(tmp_path: Path) -> None:
    """Rollouts that end at once (a game's illegal move) cost a reset, a load and a coverage
    read each: the search stops on their count, not only at half of its steps."""
    reference = _reference(tmp_path)
    measure = Measure.of(reference.spec, reference.env)
    assert measure is not None
    measure.start("explore")
    search = Search(reference.spec, reference, measure, seed=0)
    search.run(budget=200_000, horizon=1)
    measure.stop()
    assert search.stalled
    # Half the budget would be 100,000 one-step rollouts; a thousand idle ones stop it.
    assert search.steps < 20_000, search.steps


def test_cells_count_what_a_collection_holds(tmp_path: Path) -> None:
    reference = _reference(tmp_path)
    full = {"bricks": np.ones(12, dtype=np.int64), "lives": np.array(3)}
    one = {"bricks": np.eye(12, dtype=np.int64)[4], "lives": np.array(3)}
    moved = {"bricks": np.eye(12, dtype=np.int64)[7], "lives": np.array(3)}
    cells = CellKeys(reference.spec, None)
    assert cells(one) == cells(moved)
    assert cells(one) != cells(full)
    assert cells(one)[0] == (1,)  # the level: what the collection holds


def test_a_grid_drawn_for_the_report_still_counts_what_it_holds() -> None:
    """MinAtar Breakout declares its brick map a grid (for the report's picture): a grid of
    single values is a collection to the search, every brick counted, not only the first
    column's as a grid of typed cells (the first channel) would count them."""
    spec = load_spec(ROOT / "examples" / "minatar_breakout")
    assert "brick_map" in spec.state.grids
    first_column = np.zeros((10, 10), dtype=np.int64)
    first_column[1:4, 0] = 1
    elsewhere = np.zeros((10, 10), dtype=np.int64)
    elsewhere[1:4, 5] = 1
    rows = elsewhere.copy()
    rows[1:4, :] = 1
    level = [CellKeys(spec, None)({"brick_map": b})[0] for b in (first_column, elsewhere, rows)]
    assert level == [(3,), (3,), (30,)]


def test_exploration_plays_the_specs_own_policy(tmp_path: Path) -> None:
    import bricks_env

    reference = _reference(tmp_path, '[levels.l3]\npolicy = "bricks_env:clear_next"\n')
    measure = Measure.of(reference.spec, reference.env)
    assert measure is not None
    bricks_env.CALLS.clear()
    measure.start("explore")
    search = Search(reference.spec, reference, measure, seed=0)
    kept = search.run(budget=120, horizon=40)
    measure.stop()
    assert len(bricks_env.CALLS) > 20  # about half the steps that are not a repeat
    assert any((p.steps.reward >= 5).any() for p in kept)
    assert analyse(measure, reference.spec).levels["explore"] > 0


def test_l3_plays_the_specs_own_policy_beside_its_named_ones(tmp_path: Path) -> None:
    from envport.verifiers.levels.l3 import rollout as l3

    reference = _reference(
        tmp_path, '[levels.l3]\npolicies = ["uniform"]\npolicy = "bricks_env:clear_next"\n'
    )
    played = l3.play_reference(
        reference, reference.spec, L3Options(episodes=4, steps=30, mode="free")
    )
    assert [plan.policy for plan in played.plans] == ["uniform", "own", "uniform", "own"]
    # Its episodes clear the wall in 12 steps and get the refill's bonus; the uniform ones'
    # misses end them first.
    own = [i for i, plan in enumerate(played.plans) if plan.policy == "own"]
    rewards = np.split(played.steps.reward, np.cumsum(played.lengths)[:-1])
    assert all((rewards[i] >= 5).any() for i in own)
