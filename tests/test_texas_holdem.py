"""Texas hold'em: PettingZoo's texas_holdem_v4 on RLCard as the reference
(examples/texas_holdem).

The spec passes `envport check` with every bridged field described; the state bridge read
and written back plays on exactly as the original game; the book's river deals make every
hand category RLCard knows decide a showdown, ties included (counted by RLCard's own
evaluator); the JAX port keeps JAX's 32-bit defaults; and, in the slow tier, the known-good
NumPy port verifies at cut budgets while mutants of the showdown and of the betting are
caught, named in the game's terms; the labelled replay session's slip (the wheel not a
straight) is named by the offline translate and its repair verifies.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import tomllib
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from envport.repair.edits import parse_answer
from envport.repair.search_replace import parse_edit_answer
from envport.spec import load_spec
from envport.targets.reference import Reference
from envport.verifiers.selfcheck import Mutant, apply_mutant

from helpers import (
    ROOT,
    check_failures,
    run_envport,
    translated_offline,
    user_env,
    with_budgets,
)

pytest.importorskip("rlcard")

TEXAS = ROOT / "examples" / "texas_holdem"
OBSERVED = 72  # the observation's components in the turn record
CURRENT = OBSERVED  # then the player to move, then the four actions' mask
CALL, RAISE, FOLD, CHECK = 0, 1, 2, 3


def _harness(name: str) -> Any:
    """A harness file loaded by path, as envport loads it."""
    where = TEXAS / "harness" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"texas_holdem_{name}", where)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _reference() -> Reference:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return Reference(load_spec(TEXAS))


def _legal(record: np.ndarray) -> list[int]:
    return [int(a) for a in np.flatnonzero(record[CURRENT + 1 :])]


def test_the_spec_checks_and_describes_every_field() -> None:
    """`envport check` passes, and says every bridged field tells what its values mean: a
    field left undescribed (the raises per round the view shows) would be a warning."""
    done = run_envport("check", str(TEXAS), timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "describe: every bridged field says what its values mean" in done.stdout
    assert "spec ok" in done.stdout


def test_a_written_hand_plays_on_as_the_original() -> None:
    """A hand read mid-way and written into an env that finished another plays on alike to
    its end: the same views (hole cards, the board as RLCard deals it from the deck's end,
    the raises per round), masks and payoffs."""
    original, written = _reference(), _reference()
    rng = np.random.default_rng(0)
    for seed in range(8):
        record = original.reset(seed)
        for _ in range(int(rng.integers(0, 6))):  # into the hand, never ending it
            record = original.step(next(a for a in _legal(record) if a != FOLD)).obs
        state = original.read_state()
        written.reset(100 + seed)
        while not written.step(FOLD).terminated:
            pass
        written.write_state(state)
        assert all(
            np.array_equal(np.asarray(written.read_state()[k]), np.asarray(v))
            for k, v in state.items()
        )
        while True:
            legal = _legal(record)
            action = legal[int(rng.integers(len(legal)))]
            a, b = original.step(action), written.step(action)
            assert np.array_equal(a.obs, b.obs) and np.array_equal(a.reward, b.reward)
            assert (a.terminated, a.truncated) == (b.terminated, b.truncated)
            if a.terminated:
                break
            record = a.obs


def _showdowns() -> Counter:
    """Each book deal played from its river start by checks and calls to the showdown in the
    real PettingZoo env: RLCard's own `Hand` category of each player's seven cards, and
    whether RLCard's `compare_hands` split the pot."""
    from pettingzoo.classic import texas_holdem_v4
    from rlcard.games.limitholdem.utils import Hand, compare_hands

    env = texas_holdem_v4.env()
    env.reset(seed=0)
    seen: Counter = Counter()
    for _ in _harness("book").positions(env):
        game = env.unwrapped.env.game
        while not any(env.terminations.values()):
            mask = env.observe(env.agent_selection)["action_mask"]
            env.step(CHECK if mask[CHECK] else CALL)
        sevens = [[c.get_index() for c in p.hand + game.public_cards] for p in game.players]
        for seven in sevens:
            hand = Hand(seven)
            hand.evaluateHand()
            seen[hand.category] += 1
        if compare_hands(sevens) == [1, 1]:
            seen["split"] += 1
        assert sum(env.rewards.values()) == 0
    return seen


def test_the_book_makes_every_hand_category_decide_a_showdown() -> None:
    """Random deals reach a straight flush once in thousands of showdowns: the book's river
    deals, played to the showdown, give RLCard's evaluator every category 1..9 and split
    pots, so L1 and exploration compare the port's evaluator on each."""
    seen = _showdowns()
    assert {c for c in seen if c != "split"} == set(range(1, 10)), seen
    assert seen["split"] >= 5 and min(seen[c] for c in range(1, 10)) >= 2, seen


# The JAX port's modules loaded in a child process (the port's folder is a package named by
# its target, so it is loaded under another name): the test process keeps its own JAX config.
LOAD_PORT = (
    "import importlib.util, json, sys, types, jax, jax.numpy as jnp\n"
    "def load(name):\n"
    f"    path = {str(TEXAS / 'ports' / 'jax')!r} + '/' + name + '.py'\n"
    "    spec = importlib.util.spec_from_file_location('texas.' + name, path)\n"
    "    module = importlib.util.module_from_spec(spec)\n"
    "    sys.modules['texas.' + name] = module\n"
    "    spec.loader.exec_module(module)\n"
    "    return module\n"
    "sys.modules['texas'] = types.ModuleType('texas')\n"
    "sys.modules['texas'].__path__ = []\n"
    "load('hands'); load('rules'); env = load('env')\n"
)


@pytest.mark.slow
def test_the_jax_port_plays_in_float32_and_leaves_x64_off() -> None:
    """A training script importing the port keeps JAX's default 32-bit types: the port never
    switches `jax_enable_x64` on, and its view and payoffs are float32 (0.5 exactly when
    the small blind folds). Slow: compiling the step (the hand evaluator inside) takes
    seconds."""
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            LOAD_PORT + "state = jax.jit(env.init)(jax.random.PRNGKey(0))\n"
            "state = jax.jit(env.step)(state, 2, jax.random.PRNGKey(1))\n"  # the small blind folds
            "print(jax.config.jax_enable_x64, state.observation.dtype, state.rewards.dtype,"
            " sorted(abs(float(r)) for r in state.rewards))\n",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env=user_env(),
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[:3] == ["False", "float32", "float32"], done.stdout
    assert "0.5" in done.stdout


# ---- slow: the known-good port verified and mutants caught, at cut budgets ----
CUT = {
    "levels.l1": {"examples": 30},
    "levels.l2": {"examples": 10},
    "levels.l3": {"episodes": 30},
    "state.reached": {"episodes": 10},
}


def _verify(spec: Path, port: Path, out: Path, *extra: str) -> tuple[int, dict]:
    report = out / "verify.json"
    done = run_envport(
        "verify", str(spec), "--port", str(port), "--json", str(report), *extra, timeout=600
    )
    assert report.exists(), done.stdout + done.stderr
    return done.returncode, json.loads(report.read_text())


@pytest.mark.slow
def test_the_numpy_port_verifies_at_cut_budgets(tmp_path: Path) -> None:
    spec = with_budgets(TEXAS, tmp_path / "texas_holdem", CUT)
    code, report = _verify(spec, TEXAS / "ports" / "numpy", tmp_path)
    assert code == 0 and report["passed"], report.get("error")


def _mutant(mutant_id: str) -> Mutant:
    entries = tomllib.loads((TEXAS / "mutants.toml").read_text(encoding="utf-8"))["mutant"]
    return Mutant.model_validate(next(e for e in entries if e["id"] == mutant_id))


def _fields(report: dict) -> set[str]:
    return {
        diff["field"]
        for level in report["levels"]
        for divergence in level.get("divergences", [])
        for diff in divergence.get("fields", [])
    }


@pytest.mark.slow
@pytest.mark.parametrize(
    ("mutant_id", "named"),
    [
        # The book's wheels: L1's reached states compare the showdown's payoffs.
        ("numpy-wheel-missed", "rewards"),
        # The flop dealt from the deck's bottom shows other cards in the player's view.
        ("numpy-board-from-the-bottom", "obs.card."),
    ],
)
def test_a_mutant_is_caught_in_the_games_terms(mutant_id: str, named: str, tmp_path: Path) -> None:
    spec = with_budgets(TEXAS, tmp_path / "texas_holdem", CUT)
    mutant = _mutant(mutant_id)
    port = apply_mutant(mutant, TEXAS / "ports" / "numpy", tmp_path / "numpy")
    code, report = _verify(spec, port, tmp_path, "--levels", "l1", "--fail-fast")
    assert code != 0 and not report["passed"]
    assert any(named in field for field in _fields(report)), _fields(report)


# ---- the JAX replay session: the wheel missed, named by a showdown, repaired ----
SESSION = TEXAS / "replay" / "jax"
MODULES = ("hands", "rules", "env")  # the spec's [targets.jax] modules, in order
# Below CUT: the book's river deals name the slip at L1 whatever these numbers.
SESSION_CUT = {
    "levels.l1": {"examples": 10},
    "levels.l2": {"examples": 5},
    "levels.l3": {"episodes": 10},
    "state.reached": {"episodes": 5},
}


def _session_port(tmp_path: Path) -> dict[str, str]:
    """The port the session's answers make: each module generated whole, then the repair's
    edits applied to those files."""
    files: dict[str, str] = {}
    for module in MODULES:
        text = (SESSION / f"000-generate-{module}.md").read_text()
        files.update(parse_answer(text, tmp_path, [f"{module}.py"]).files)
    repair = (SESSION / "001-repair-env.md").read_text()
    return files | parse_edit_answer(repair, tmp_path, files).files


def test_the_jax_session_is_labelled_and_its_repair_ends_on_the_known_good_port(
    tmp_path: Path,
) -> None:
    """Every answer is labelled hand-written; the generated evaluator misses the wheel, and
    the repair's edits turn the three files into the known-good port's, so the slow test's
    verified run stands for that port."""
    session = json.loads((SESSION / "session.json").read_text())
    assert {entry["source"] for entry in session["entries"]} == {"hand-written"}
    generated = parse_answer((SESSION / "000-generate-hands.md").read_text(), tmp_path).files
    good = TEXAS / "ports" / "jax"
    assert generated["hands.py"] != (good / "hands.py").read_text()
    repaired = _session_port(tmp_path)
    assert repaired == {f"{m}.py": (good / f"{m}.py").read_text() for m in MODULES}


@pytest.mark.slow
def test_texas_translates_offline_and_the_wheel_slip_is_repaired(tmp_path: Path) -> None:
    """The session's evaluator finds straights with the ace high only; the env module's L1
    plays a book showdown of the wheel against three of a kind and names the payoffs
    (`rewards[player_0]: expected 9, got -9`); the repair lets the ace play low and the run
    ends verified on the known-good port."""
    spec = with_budgets(TEXAS, tmp_path / "texas_holdem", SESSION_CUT)
    run = translated_offline(spec, "jax", tmp_path / "runs", timeout=900)
    failed = check_failures(run)
    assert failed and all("module env" in f for f in failed), failed
    assert any("rewards[player_0]: expected" in f for f in failed), failed
    good = TEXAS / "ports" / "jax"
    for module in MODULES:
        assert (run / "port" / f"{module}.py").read_text() == (good / f"{module}.py").read_text()
