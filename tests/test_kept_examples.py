"""L1's examples as the reference answered them, kept on disk when slow to draw, serve the
next verify of the spec: the same verdict, the same coverage, a mutant still caught, and no
example drawn again; another seed or size is drawn afresh, and a quick draw is never kept."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from envport.verifiers.draws import reached_cache
from envport.verifiers.levels.l1 import examples as l1_examples
from envport.verifiers.levels.l1 import properties
from envport.verifiers.selfcheck import apply_mutant, load_mutants
from envport.verifiers.verify import VerifyOptions, verify

from helpers import CARTPOLE, NUMPY_PORT

OPTIONS = VerifyOptions(target="numpy", levels=("l1",), shrink=False, examples=40)


def _kept(cache: Path) -> list[Path]:
    return list((cache / "reached").glob("*.pickle.gz"))


def _refuse_drawing(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object) -> None:
        raise AssertionError("a kept example was drawn again")

    monkeypatch.setattr(properties, "reference_example", refuse)


def test_slow_draws_are_kept_and_the_next_verify_draws_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ENVPORT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(properties, "KEEP_AFTER", 0.0)  # every draw counts as slow
    drawn = verify(str(CARTPOLE), str(NUMPY_PORT), OPTIONS)
    assert drawn.passed, drawn.text()
    assert _kept(tmp_path / "cache")

    _refuse_drawing(monkeypatch)
    loaded = verify(str(CARTPOLE), str(NUMPY_PORT), OPTIONS)
    assert loaded.passed, loaded.text()
    assert [(lv.mode, lv.steps_compared) for lv in loaded.levels] == [
        (lv.mode, lv.steps_compared) for lv in drawn.levels
    ]
    assert loaded.coverage is not None and drawn.coverage is not None
    assert (loaded.coverage.covered, loaded.coverage.total) == (
        drawn.coverage.covered,
        drawn.coverage.total,
    )

    # A mutant meets the kept examples and is caught on them.
    mutant = next(m for m in load_mutants(CARTPOLE) if m.target == "numpy" and not m.equivalent)
    port = apply_mutant(mutant, NUMPY_PORT, tmp_path / mutant.id)
    caught = verify(str(CARTPOLE), str(port), OPTIONS)
    assert caught.error is None and not caught.passed, caught.text()

    # Another seed, or another number of examples, is drawn afresh.
    for other in (replace(OPTIONS, seed=1), replace(OPTIONS, examples=41)):
        with pytest.raises(AssertionError, match="drawn again"):
            verify(str(CARTPOLE), str(NUMPY_PORT), other)


def test_a_quick_draw_is_made_each_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENVPORT_CACHE_DIR", str(tmp_path / "cache"))
    calls = {"n": 0}
    answer = l1_examples.reference_example

    def counted(*args: object) -> object:
        calls["n"] += 1
        return answer(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(properties, "reference_example", counted)
    for _ in range(2):
        assert verify(str(CARTPOLE), str(NUMPY_PORT), OPTIONS).passed
    assert calls["n"] >= 2 * OPTIONS.examples  # type: ignore[operator]
    assert not _kept(tmp_path / "cache")


def test_what_pickle_cannot_take_is_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ENVPORT_CACHE_DIR", str(tmp_path / "cache"))
    reached_cache.store("unpicklable", [lambda: 0])  # drawn again next time, no error
    assert reached_cache.load("unpicklable") is None
    assert not list((tmp_path / "cache" / "reached").iterdir())
