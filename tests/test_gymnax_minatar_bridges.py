"""gymnax's own MinAtar games verified against MinAtar through one-file bridges
(`examples/minatar_<game>/ports/gymnax/env.py`): the verdicts of README's third-party table.

Each divergence found is the rule the two differ on, named in the line that reports it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import ROOT, run_envport

pytest.importorskip("gymnax")
GAMES = ("breakout", "space_invaders", "freeway")


def _bridge(game: str) -> Path:
    return ROOT / "examples" / f"minatar_{game}" / "ports" / "gymnax"


def _verify(game: str, *args: str) -> tuple[int, str]:
    done = run_envport(
        "verify", str(ROOT / "examples" / f"minatar_{game}"), "--port", str(_bridge(game)),
        "--target", "jax", *args, timeout=900,
    )  # fmt: skip
    return done.returncode, done.stdout + done.stderr


def test_the_bridges_are_one_file_each() -> None:
    # The env itself is gymnax's, untouched: the bridge only maps the contract onto it.
    for game in GAMES:
        assert sorted(p.name for p in _bridge(game).glob("*.py")) == ["env.py"], game


@pytest.mark.slow
@pytest.mark.parametrize("game", ["breakout", "space_invaders"])
def test_gymnax_plays_on_after_the_game_has_ended(game: str) -> None:
    """MinAtar's `act` returns at once on an ended game; gymnax's `step_env` plays the
    frame (its autoreset hides this in training). L1 draws an ended game and says so."""
    code, out = _verify(game, "--levels", "l1")
    assert code == 1, out
    assert "FAIL l1.transition" in out and "terminal: True" in out


@pytest.mark.slow
def test_gymnax_freeway_ends_at_its_time_limit_as_truncation_a_step_early() -> None:
    """MinAtar ends Freeway (terminated) when `terminate_timer` passes 0, 2501 frames in;
    gymnax truncates at `time >= 2500`. Elsewhere the bridge's step (gymnax's own functions
    given the spec's noise) and its sampler match MinAtar's."""
    code, out = _verify("freeway", "--levels", "l1")
    assert code == 1, out
    assert "truncated: expected False, got True" in out
    assert "pass l1.noise" in out and "pass l1.sampled_step" in out
