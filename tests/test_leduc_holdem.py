"""Leduc hold'em: PettingZoo's leduc_holdem_v4 on RLCard as the reference
(examples/leduc_holdem).

The state bridge (RLCard's deck, hands, chips and betting round, PettingZoo's turn) read and
written back plays on exactly as the original game, a divergence in a player's view reads
in the game's terms (`obs.my_chips.4`, `legal_action_mask[1 raise]`), the JAX port's packed
game holds every field's widest value, and, in the slow tier, the offline translate from the
labelled replay session names its slip and ends verified.
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

from envport.repair.edits import parse_answer
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
    check names the public card, and the repair (RLCard pops the deck's end, as the
    known-good port deals it) ends the run on the session's repaired env.py, verified. The
    session keeps the port's earlier int8 layout (the known-good port now packs its game in
    int32 words for speed), so the run is compared with the session's answer, and the deal
    with the known-good port's. Small budgets: the book's showdowns catch it at once."""
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
    repair = (LEDUC / "replay" / "jax" / "001-repair-env.md").read_text()
    repaired = parse_answer(repair, tmp_path / "answer").files["env.py"]
    assert (run / "port" / "env.py").read_text() == repaired
    deal = 'top_card = jnp.sum(jnp.where(s["deck_length"] - 1 == DECK_SLOTS, s["deck"], 0))'
    assert deal in repaired and deal in (LEDUC / "ports" / "jax" / "env.py").read_text()


# The JAX port's modules loaded in a child process (the port's folder is a package named by
# its target, so it is loaded under another name): the test process keeps its own JAX config.
LOAD_PORT = (
    "import importlib.util, json, sys, types, jax, jax.numpy as jnp\n"
    "def load(name):\n"
    f"    path = {str(LEDUC / 'ports' / 'jax')!r} + '/' + name + '.py'\n"
    "    spec = importlib.util.spec_from_file_location('leduc.' + name, path)\n"
    "    module = importlib.util.module_from_spec(spec)\n"
    "    sys.modules['leduc.' + name] = module\n"
    "    spec.loader.exec_module(module)\n"
    "    return module\n"
    "sys.modules['leduc'] = types.ModuleType('leduc')\n"
    "sys.modules['leduc'].__path__ = []\n"
    "load('rules'); env = load('env')\n"
)


def _run_port(script: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", LOAD_PORT + script],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env=user_env(),
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_jax_port_plays_in_float32_and_leaves_x64_off() -> None:
    """A training script importing the port keeps JAX's default 32-bit types: the port never
    switches `jax_enable_x64` on, and its view and payoffs are float32 (0.5, 1.5 exactly)."""
    out = _run_port(
        "state = env.init(jax.random.PRNGKey(0))\n"
        "state = env.step(state, 2, jax.random.PRNGKey(1))\n"  # a fold: the hand's payoffs
        "print(jax.config.jax_enable_x64, state.observation.dtype, state.rewards.dtype,"
        " sorted(abs(float(r)) for r in state.rewards))\n"
    )
    assert out.split()[:3] == ["False", "float32", "float32"], out
    assert "0.5" in out  # the small blind's fold: half a big blind


# Hands in play at the widest values each field of the JAX port's packed game holds: the
# first round capped at two raises with the king of hearts (5) on the deck's top and no
# public card (-1); the second capped too, 14 chips in once player_0 calls.
WIDEST = [
    {"hand": (0, 1), "public_card": -1, "deck": [2, 3, 4, 5], "deck.length": 4,
     "chips": (4, 6), "round.raised": [4, 6], "round.have_raised": 2,
     "round.not_raise_num": 1, "round.raise_amount": 2, "round_counter": 0,
     "game_pointer": 0},
    {"hand": (5, 3), "public_card": 4, "deck": [0, 1, 2, 0], "deck.length": 3,
     "chips": (10, 14), "round.raised": [4, 8], "round.have_raised": 2,
     "round.not_raise_num": 1, "round.raise_amount": 4, "round_counter": 1,
     "game_pointer": 0},
]  # fmt: skip


def test_the_jax_ports_packed_game_holds_every_fields_widest_value() -> None:
    """The port packs its game into bit fields of int32 words for speed; a field too narrow
    for Leduc's widest values (14 chips, a round's 8, card code 5, no public card: -1) would
    wrap silently. Each hand written from the reference's leaves reads back the same, and
    the last one's call to 14 chips each reads back from the step's packed game."""
    hands = []
    for widest in WIDEST:
        ref = {k: v for k, v in widest.items() if k not in ("hand", "chips")}
        for seat in (0, 1):
            ref[f"hand.player_{seat}"] = widest["hand"][seat]
            ref[f"chips.player_{seat}"] = widest["chips"][seat]
            ref[f"folded.player_{seat}"] = False
            ref[f"rewards.player_{seat}"] = 0.0
        ref["current_player"] = widest["game_pointer"]
        hands.append(ref)
    out = _run_port(
        f"hands = json.loads({json.dumps(hands)!r})\n"
        "read = lambda s: {k: v.tolist() for k, v in env.state_to_reference(s).items()}\n"
        "states = [env.state_from_reference(h) for h in hands]\n"
        "called = env.step(states[-1], 0, jax.random.PRNGKey(0))\n"  # player_0 calls 8
        "print(json.dumps([read(s) for s in states + [called]]))\n"
    )
    *back, called = json.loads(out)
    for ref, read in zip(hands, back, strict=True):
        length = ref["deck.length"]
        assert read["deck"][:length] == ref["deck"][:length]
        differ = {k for k, v in ref.items() if k != "deck" and read[k] != v}
        assert not differ, {k: (ref[k], read[k]) for k in sorted(differ)}
    assert (called["chips.player_0"], called["chips.player_1"]) == (14, 14)
    assert called["round_counter"] == 2 and called["public_card"] == 4


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
