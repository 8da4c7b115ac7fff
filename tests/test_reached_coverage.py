"""A verify that loads the reference's `[state.reached]` play from disk covers what the one
that played it did: the play's branch arcs are kept with it. Texas hold'em's book reaches
its rare showdowns (four of a kind) only in that play; a warm cache reported them as
branches never exercised, and the verdict went from verified to verified with gaps."""

from __future__ import annotations

from pathlib import Path

import pytest

from envport.verifiers.verify import VerifyOptions, verify

from helpers import ROOT

TEXAS = ROOT / "examples" / "texas_holdem"


@pytest.mark.slow
def test_a_play_loaded_from_disk_covers_what_playing_it_did(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ENVPORT_CACHE_DIR", str(tmp_path / "cache"))
    options = VerifyOptions(target="numpy", levels=("l1",), examples=30, shrink=False)
    port = str(TEXAS / "ports" / "numpy")
    played = verify(str(TEXAS), port, options)
    assert any((tmp_path / "cache" / "reached").iterdir())  # kept for the next verify
    from envport.verifiers.draws import reached

    reached._PLAYED.clear()  # as a new process: the next verify loads the play
    loaded = verify(str(TEXAS), port, options)
    assert played.coverage is not None and loaded.coverage is not None
    assert played.coverage.missed == loaded.coverage.missed == []
    assert (loaded.coverage.covered, loaded.coverage.total) == (
        played.coverage.covered,
        played.coverage.total,
    )
