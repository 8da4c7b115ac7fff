"""The reference's reset sample, kept on disk when it was slow to draw, serves the next
verify: l2.reset's verdict and the coverage are what drawing it gave, and no reference reset
is drawn again. A quick sample is never kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from envport.spec import load_spec
from envport.targets.reference import Reference
from envport.verifiers import kept_resets
from envport.verifiers.stats import reset_sample
from envport.verifiers.verify import VerifyOptions, verify

from helpers import ROOT

LAKE = ROOT / "examples" / "frozenlake"
PORT = str(LAKE / "ports" / "numpy")
OPTIONS = VerifyOptions(target="numpy", levels=("l2",), shrink=False)


def _reset_level(report):  # type: ignore[no-untyped-def]
    return next(level for level in report.levels if level.mode == "reset")


def test_a_slow_sample_is_kept_and_the_next_verify_draws_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ENVPORT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(kept_resets, "KEEP_AFTER", 0.0)  # every sample counts as slow
    drawn = verify(str(LAKE), PORT, OPTIONS)
    assert drawn.passed
    assert len(list((tmp_path / "cache" / "reached").glob("*.pickle.gz"))) == 1

    def refuse(*args: object) -> None:
        raise AssertionError("the kept sample was drawn again")

    monkeypatch.setattr(reset_sample, "draw", refuse)
    loaded = verify(str(LAKE), PORT, OPTIONS)
    assert loaded.passed
    assert _reset_level(loaded).statistics == _reset_level(drawn).statistics
    assert loaded.coverage is not None and drawn.coverage is not None
    assert (loaded.coverage.covered, loaded.coverage.total) == (
        drawn.coverage.covered,
        drawn.coverage.total,
    )
    # Another seed is another sample: drawn, not loaded.
    spec = load_spec(LAKE)
    with pytest.raises(AssertionError, match="drawn again"):
        kept_resets.draw(spec, Reference(spec), OPTIONS.seed + 1)


def test_a_quick_sample_is_drawn_each_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENVPORT_CACHE_DIR", str(tmp_path / "cache"))
    spec = load_spec(LAKE)
    sample = kept_resets.draw(spec, Reference(spec), OPTIONS.seed)
    assert sample.n > 0
    assert not list((tmp_path / "cache").glob("reached/*.pickle.gz"))
