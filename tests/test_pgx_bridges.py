"""pgx's own MinAtar games verified against MinAtar through one-file bridges
(`examples/minatar_<game>/ports/pgx/env.py`): the verdicts of README's third-party table.

`envport verify examples/minatar_<game> --port examples/minatar_<game>/ports/pgx --target jax`
runs the full budgets; these tests run smaller ones.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import ROOT, run_envport

pytest.importorskip("pgx")


def _bridge(game: str) -> Path:
    return ROOT / "examples" / f"minatar_{game}" / "ports" / "pgx"


def _verify(game: str, *args: str, timeout: float = 600) -> tuple[int, str]:
    done = run_envport(
        "verify", str(ROOT / "examples" / f"minatar_{game}"), "--port", str(_bridge(game)),
        "--target", "jax", *args, timeout=timeout,
    )  # fmt: skip
    return done.returncode, done.stdout + done.stderr


def test_the_bridges_are_one_file_each() -> None:
    # The env itself is pgx's, untouched: the bridge only maps the contract onto it.
    for game in ("breakout", "asterix", "freeway", "space_invaders", "seaquest"):
        assert sorted(p.name for p in _bridge(game).glob("*.py")) == ["env.py"], game


def test_pgx_breakout_verifies() -> None:
    code, out = _verify(
        "breakout",
        "--examples", "60", "--episodes", "20", "--explore-steps", "0",
    )  # fmt: skip
    assert code == 0, out
    assert "verified" in out and "pass l1.transition" in out and "pass l3.free" in out


@pytest.mark.slow
@pytest.mark.parametrize("game", ["asterix", "freeway"])
def test_pgx_stochastic_games_verify_through_their_noise(game: str) -> None:
    """pgx's `_step_det` fed the spec's noise: the same transitions as MinAtar's draws give,
    and the bridge's own sampler distributed as the reference's. Asterix differs in one
    rule, read in pgx's source before any check reached it: after a step on a game that
    has ended, pgx's last action is not MinAtar's; L1 (which compares the state a step
    leaves) and L2 reach it, since Asterix's lanes are drawn lane by lane
    (docs/verification.md, the pgx table). And pgx's `init(key)` starts every episode with
    last action 0, where MinAtar keeps it across reset(): l2.reset_after_play."""
    code, out = _verify(
        game, "--examples", "60", "--episodes", "10", "--steps", "200", timeout=1800
    )
    assert "pass l1.sampled_step" in out
    assert "pass l3.free" in out and "pass l3.plain" in out
    if game == "freeway":
        assert code == 0 and "pass l1.transition" in out, out
        return
    assert code == 1, out
    # Both checks that step from a drawn ended game and read the state it leaves, and the
    # reset that follows an episode.
    failed = [line for line in out.splitlines() if line.startswith("FAIL ")]
    assert [line.split(":")[0] for line in failed] == [
        "FAIL l1.transition",
        "FAIL l2.reset_after_play",
        "FAIL l2.interaction",
    ], out
    # The field, not its values: shrinking is bounded in time, so the example it ends on
    # depends on the machine's speed.
    assert "state.last_action: expected" in out


@pytest.mark.slow
def test_pgx_space_invaders_plays_like_minatar() -> None:
    """Along played episodes pgx's SpaceInvaders is MinAtar's (every state L3 reaches has
    an alien, the one pgx needs; see the next test)."""
    code, out = _verify("space_invaders", "--levels", "l3", "--episodes", "20")
    assert code == 0, out
    assert "pass l3.free" in out and "pass l3.resync" in out


@pytest.mark.slow
def test_pgx_space_invaders_never_answers_a_batch_holding_a_board_without_aliens() -> None:
    """The divergence: with no alien left, MinAtar refills the board in the same step; pgx
    searches for the alien that fires (`_nearest_alien`, a `lax.while_loop` until a column
    holds one) before that. Alone, pgx's `lax.cond` skips the search when the shot timer is
    not 0; in a vmapped batch both branches run, so the search never ends and the worker is
    stopped at the request's timeout."""
    code, out = _verify("space_invaders", "--levels", "l1", "--timeout", "60", timeout=900)
    assert code == 1, out
    assert "port did not answer `step_batch` within 60 s" in out


@pytest.mark.slow
def test_pgx_seaquest_diverges_on_the_ramp_at_a_surfacing() -> None:
    """One of pgx's three differences from MinAtar's Seaquest (README's table): `_surface`
    raises `ramp_index` before testing its parity, so the move speed drops on the other
    surfacings; the arranged-surfacing probe meets it. Unshrunk: shrinking is bounded in
    time, and the fields an example it stops on shows depend on the machine's load (under
    CI's, one showed no `move_speed`); the first example drawn does not."""
    code, out = _verify(
        "seaquest", "--levels", "l1", "--module", "env", "--no-shrink", timeout=1800
    )
    assert code == 1, out
    assert "FAIL l1.env.surfacing" in out and "move_speed: expected" in out
