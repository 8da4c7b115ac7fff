"""`envport check SPEC`: a spec tried alone, through the real command line, no port."""

from __future__ import annotations

import shutil
from pathlib import Path

from helpers import CARTPOLE, ROOT, run_envport, user_env


def test_a_good_spec_is_checked_in_seconds_and_says_what_it_found() -> None:
    done = run_envport("check", str(ROOT / "examples" / "minigrid_doorkey"))
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "state: reset(seed=0) read as grid int64[5, 5, 3]" in out
    assert "state: written into the reference and read back unchanged" in out
    assert "determinism: the same injected state and action step alike" in out
    # Every listed module reaches the prompts, each named.
    for module in ("minigrid.envs.doorkey", "minigrid.core.world_object"):
        assert f"sources: {module}, " in out
    assert out.rstrip().endswith("spec ok: `envport translate` and `envport verify` can use it")


def _copy(tmp_path: Path) -> Path:
    copy = tmp_path / "cartpole"
    shutil.copytree(CARTPOLE, copy, ignore=shutil.ignore_patterns("ports", "replay"))
    return copy


def _one_line_exit_2(done, *phrases: str) -> None:
    assert done.returncode == 2, done.stdout + done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    for phrase in phrases:
        assert phrase in lines[0], lines[0]


def test_a_state_path_that_does_not_resolve_is_one_line(tmp_path: Path) -> None:
    copy = _copy(tmp_path)
    spec = copy / "envport.toml"
    spec.write_text(spec.read_text().replace('"unwrapped.state"', '"unwrapped.stat"'))
    _one_line_exit_2(run_envport("check", str(copy)), "state.fields.physics", "unwrapped.stat")


def test_bounds_narrower_than_the_reset_state_are_a_warning(tmp_path: Path) -> None:
    copy = _copy(tmp_path)
    spec = copy / "envport.toml"
    text = spec.read_text()
    assert "low = [-2.4, -3.0" in text
    spec.write_text(text.replace("low = [-2.4, -3.0", "low = [0.3, -3.0"))
    done = run_envport("check", str(copy))
    assert done.returncode == 0, done.stderr
    assert "warn bounds: the reset state lies outside state.bounds in physics" in done.stdout


def test_a_reference_with_dice_of_its_own_is_named(tmp_path: Path) -> None:
    folder = tmp_path / "gusty"
    folder.mkdir()
    (folder / "envport.toml").write_text(
        'name = "gusty"\n[reference]\nentry = "gusty_env:make"\n'
        '[state]\nfields = { position = "unwrapped.position" }\n'
        "[state.bounds]\nposition = { low = -9, high = 9, integer = true }\n"
    )
    done = run_envport("check", str(folder), env=user_env(PYTHONPATH=str(ROOT / "tests")))
    _one_line_exit_2(done, "not deterministic from an injected state", "`env.random`")


def test_a_grid_fields_bounds_may_be_nested_as_the_field_is_shaped(tmp_path: Path) -> None:
    """docs/structured-state.md writes a grid's bounds nested; they are read flat, C order."""
    copy = _copy(tmp_path)
    spec = copy / "envport.toml"
    flat = "low = [-2.4, -3.0, -0.20943951023931953, -3.5]"
    assert flat in spec.read_text()
    nested = "low = [[-2.4, -3.0], [-0.20943951023931953, -3.5]]"
    spec.write_text(spec.read_text().replace(flat, nested))
    done = run_envport("check", str(copy))
    assert done.returncode == 0, done.stderr
    ragged = "low = [[-2.4, -3.0], [-0.20943951023931953]]"
    spec.write_text(spec.read_text().replace(nested, ragged))
    _one_line_exit_2(
        run_envport("check", str(copy)),
        "key `state.bounds.physics.low`: nested bounds must be rectangular",
    )


def test_summaries_are_tried_on_the_reset_state_and_a_failing_one_is_one_line(
    tmp_path: Path,
) -> None:
    copy = _copy(tmp_path)
    spec = copy / "envport.toml"
    summaries = '\n[state.summaries]\nspread = "float(np.abs(physics).max())"\n'
    spec.write_text(spec.read_text() + summaries)
    done = run_envport("check", str(copy))
    assert done.returncode == 0, done.stderr
    assert "summaries of the reset state: spread 0.0" in done.stdout
    # An ndarray method numpy implements by a lazy import (`max`) works; a name that is not
    # a field is the spec's error, named by its key.
    spec.write_text(spec.read_text().replace("np.abs(physics)", "np.abs(physic)"))
    _one_line_exit_2(run_envport("check", str(copy)), "state.summaries.spread", "physic")
