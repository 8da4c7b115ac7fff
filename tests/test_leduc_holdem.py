"""Leduc hold'em: PettingZoo's leduc_holdem_v4 on RLCard as the reference
(examples/leduc_holdem).

The state bridge (RLCard's deck, hands, chips and betting round, PettingZoo's turn) read and
written back plays on exactly as the original game, a divergence in a player's view reads
in the game's terms (`obs.my_chips.4`, `legal_action_mask[1 raise]`), and, in the slow tier,
the offline translate from the labelled replay session names its slip and ends verified.
"""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from envport.spec import load_spec
from envport.targets.reference import Reference
from envport.verifiers.reporting.compare import Steps, divergent_steps

from helpers import ROOT, check_failures, translated_offline, user_env, with_budgets

pytest.importorskip("rlcard")

LEDUC = ROOT / "examples" / "leduc_holdem"
OBSERVED = 36  # the observation's components in the turn record
CURRENT = OBSERVED  # then the player to move, then the four actions' mask
CALL, RAISE, FOLD, CHECK = 0, 1, 2, 3


def _reference() -> Reference:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return Reference(load_spec(LEDUC))


def _legal(record: np.ndarray) -> list[int]:
    return [int(a) for a in np.flatnonzero(record[CURRENT + 1 :])]


def test_a_written_hand_plays_on_as_the_original() -> None:
    """A hand read mid-way and written into an env that finished another plays on alike:
    the same views, masks and payoffs, the public card the deck's last card."""
    original, written = _reference(), _reference()
    rng = np.random.default_rng(0)
    for seed in range(12):
        record = original.reset(seed)
        for _ in range(int(rng.integers(0, 3))):  # into the hand, never ending it
            record = original.step(next(a for a in _legal(record) if a != FOLD)).obs
        state = original.read_state()
        written.reset(100 + seed)
        while not written.step(FOLD).terminated:
            pass
        written.write_state(state)
        assert _same(written.read_state(), state)
        deck = np.asarray(state["deck"])[: int(state["deck.length"])]
        while True:
            legal = _legal(record)
            action = legal[int(rng.integers(len(legal)))]
            a, b = original.step(action), written.step(action)
            assert np.array_equal(a.obs, b.obs) and np.array_equal(a.reward, b.reward)
            assert (a.terminated, a.truncated) == (b.terminated, b.truncated)
            if a.terminated:
                break
            record = a.obs
            public = int(original.read_state()["public_card"])
            if public >= 0 and int(state["public_card"]) < 0:
                assert public == int(deck[-1]), "RLCard deals the deck's last card"


def _same(read: dict[str, Any], wrote: dict[str, Any]) -> bool:
    return all(np.array_equal(np.asarray(read[k]), np.asarray(v)) for k, v in wrote.items())


def test_a_divergence_names_chips_cards_and_actions() -> None:
    """A player's view differing in its chips, the public card, the player to move and a
    legal action reads by name, not by flat index (`obs[10]`, `legal_action_mask[1]`)."""
    spec = load_spec(LEDUC)
    want = _reference().reset(0)
    got = want.copy()
    mine = int(np.flatnonzero(want[6:21])[0])
    got[6 + mine], got[6 + mine + 2] = 0, 1  # two chips more of its own in the pot
    got[3 + 2] = 1  # a king on the table before the second round
    got[CURRENT] = 1 - want[CURRENT]
    got[CURRENT + 1 + RAISE] = 0
    rewards = np.zeros((1, 2))
    done = np.zeros(1, bool)
    expected, actual = Steps(want[None], rewards, done, done), Steps(got[None], rewards, done, done)
    ((_, diffs),) = divergent_steps(spec, expected, actual, False, np.asarray([0]))
    shown = {d.field for d in diffs}
    assert shown == {
        f"obs.my_chips.{mine}",
        f"obs.my_chips.{mine + 2}",
        "obs.public.K",
        "current_player",
        "legal_action_mask[1 raise]",
    }, shown


def test_the_jax_session_is_labelled_hand_written() -> None:
    session = json.loads((LEDUC / "replay" / "jax" / "session.json").read_text())
    assert {entry["source"] for entry in session["entries"]} == {"hand-written"}


@pytest.mark.slow
def test_leduc_translates_offline_and_the_public_card_slip_is_repaired(tmp_path: Path) -> None:
    """The session's env deals the public card from the deck's first item; the env module's
    check names the public card, and the repair (RLCard pops the deck's end) ends on the
    known-good env.py, verified. Small budgets: the book's showdowns catch it at once."""
    spec = with_budgets(
        LEDUC,
        tmp_path / "leduc_holdem",
        {
            "levels.l1": {"examples": 30},
            "levels.l2": {"examples": 10},
            "levels.l3": {"episodes": 40},
            "state.reached": {"episodes": 20},
        },
    )
    run = translated_offline(spec, "jax", tmp_path / "runs", timeout=900)
    failed = check_failures(run)
    assert failed and any("obs.public." in f or "public_card: expected" in f for f in failed)
    note = "\nHand-written known-good port: a test subject for the verifier, not model output.\n"
    known_good = (LEDUC / "ports" / "jax" / "env.py").read_text().replace(note, "\n")
    assert (run / "port" / "env.py").read_text() == known_good


def test_the_jax_port_plays_in_float32_and_leaves_x64_off() -> None:
    """A training script importing the port keeps JAX's default 32-bit types: the port never
    switches `jax_enable_x64` on, and its view and payoffs are float32 (0.5, 1.5 exactly)."""
    # The port's folder is a package named by its target; load it under another name.
    script = (
        "import importlib.util, sys, jax, jax.numpy as jnp\n"
        "def load(name):\n"
        f"    path = {str(LEDUC / 'ports' / 'jax')!r} + '/' + name + '.py'\n"
        "    spec = importlib.util.spec_from_file_location('leduc.' + name, path)\n"
        "    module = importlib.util.module_from_spec(spec)\n"
        "    sys.modules['leduc.' + name] = module\n"
        "    spec.loader.exec_module(module)\n"
        "    return module\n"
        "import types; sys.modules['leduc'] = types.ModuleType('leduc')\n"
        "sys.modules['leduc'].__path__ = []\n"
        "load('rules'); env = load('env')\n"
        "state = env.init(jax.random.PRNGKey(0))\n"
        "state = env.step(state, 2, jax.random.PRNGKey(1))\n"  # a fold: the hand's payoffs
        "print(jax.config.jax_enable_x64, state.observation.dtype, state.rewards.dtype,"
        " sorted(abs(float(r)) for r in state.rewards))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env=user_env(),
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[:3] == ["False", "float32", "float32"], done.stdout
    assert "0.5" in done.stdout  # the small blind's fold: half a big blind


def test_the_pgx_anchor_takes_rlcards_check_as_a_call() -> None:
    """`envport bench`'s pgx:leduc_holdem anchor plays the reference's action codes: RLCard's
    check (3) is pgx's call, not pgx's last action (fold, clipped to), which at the start is
    illegal in pgx and would end every hand at once, timing another game."""
    pytest.importorskip("pgx")
    import jax

    from envport.targets.bench.anchors import load_anchor

    anchor = load_anchor("pgx:leduc_holdem")
    _, state = anchor.reset(jax.random.PRNGKey(0))
    _, after, reward, done = anchor.step(jax.random.PRNGKey(1), state, 3)
    assert not bool(done) and float(reward) == 0.0
    assert int(after.current_player) == 1 - int(state.current_player)
