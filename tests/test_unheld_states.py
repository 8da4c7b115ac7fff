"""Positions a port cannot hold, and fields the spec derives (docs/spec.md, "Derived fields";
docs/port-contract.md, "States a port cannot hold").

On Connect Four (real PettingZoo, the known-good NumPy port in a sandboxed worker): a port
that derives the mover from the piece counts, as OpenSpiel's does, says which drawn
positions it cannot hold (`can_hold`); L1 counts them, reports the count as a gap, fails
above the ceiling, and calls a refused position the reference reached in play a divergence.
The example's `[state.derive]` draws only positions such a port holds.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import seed as hypothesis_seed

from envport.errors import SpecError
from envport.pipeline.spec_check import check_spec
from envport.spec import load_spec
from envport.targets.reference import Reference
from envport.verifiers.draws.strategies import draws_for, state_strategy
from envport.verifiers.options import VerifyOptions
from envport.verifiers.verify import verify

from helpers import ROOT, run_envport

CONNECT_FOUR = ROOT / "examples" / "connect_four"

# A labelled test port: the known-good NumPy port plus a `can_hold` answering, per position
# of a batch, whether `RULE` (over `ones`, `twos`, `mover`) holds.
CAN_HOLD = '''

def can_hold(ref):
    """Test subject (not model output): which positions this port can hold."""
    ones = sum((np.asarray(ref[f"board.c{c}"]) == 1).sum(axis=1) for c in range(COLUMNS))
    twos = sum((np.asarray(ref[f"board.c{c}"]) == 2).sum(axis=1) for c in range(COLUMNS))
    mover = np.asarray(ref["current_player"])
    return np.asarray(RULE, dtype=bool)
'''
# OpenSpiel's Connect Four: the mover is player_1 exactly when player_0 has one more piece.
FROM_COUNTS = "mover == ones - twos"


def _port(tmp_path: Path, rule: str) -> Path:
    port = tmp_path / "port"
    shutil.copytree(CONNECT_FOUR / "ports" / "numpy", port)
    env = port / "env.py"
    env.write_text(env.read_text() + CAN_HOLD.replace("RULE", rule))
    return port


def _spec(tmp_path: Path, derive: bool, extra: str = "") -> Path:
    copy = tmp_path / "connect_four"
    shutil.copytree(CONNECT_FOUR, copy, ignore=shutil.ignore_patterns("ports", "__pycache__"))
    toml = copy / "envport.toml"
    text = toml.read_text()
    if not derive and "[state.derive]" in text:
        # The spec as it was: the mover drawn apart from the board.
        start = text.index("[state.derive]")
        text = text[:start] + text[text.index("[state.fields.current_player]") :]
    # Six games' endings are plenty here (the example plays 36).
    text = text.replace("examples = 300\n", "examples = 300\nendings = 6\n", 1)
    toml.write_text(text + extra)
    return copy


def _verify(spec: Path, port: Path) -> Any:
    # The entry's checks only (transition, endings): the probes of `rules` load no state.
    options = VerifyOptions(target="numpy", levels=("l1",), examples=60, module="env")
    return verify(str(spec), str(port), options)


def _level(report: Any, name: str) -> Any:
    return next(level for level in report.levels if level.name == name)


def test_derived_fields_make_every_drawn_position_one_play_reaches() -> None:
    spec = load_spec(CONNECT_FOUR)
    assert "current_player" in spec.state.derive
    found: list[dict[str, np.ndarray]] = []

    @hypothesis_seed(5)
    @settings(max_examples=60, database=None, deadline=None)
    @given(state_strategy(spec, draws_for(spec, Reference(spec))))
    def collect(state: dict[str, np.ndarray]) -> None:
        found.append(state)

    collect()
    movers = set()
    for state in found:
        pieces = np.concatenate(
            [state[f"board.c{c}"][: int(state[f"board.c{c}.length"])] for c in range(7)]
        )
        ones, twos = int(np.sum(pieces == 1)), int(np.sum(pieces == 2))
        assert ones - twos in (0, 1) and int(state["current_player"]) == ones - twos, state
        movers.add(int(state["current_player"]))
    assert movers == {0, 1}
    # Boards of many pieces too, not only the few where drawn colours happen to balance.
    assert max(sum(int(s[f"board.c{c}.length"]) for c in range(7)) for s in found) >= 20


def _one_line_exit_2(*args: str, said: str) -> None:
    done = run_envport(*args)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = (done.stdout + done.stderr).strip().splitlines()
    assert len(lines) == 1 and said in lines[0] and "Traceback" not in lines[0], lines


def test_a_bad_derive_is_one_line_and_exit_2(tmp_path: Path) -> None:
    for number, (table, said) in enumerate(
        (
            ('mover = "0"', "`derive.mover`: no such state field"),
            ('current_player = "pieces(board,"', "not a Python expression"),
        )
    ):
        spec = _spec(tmp_path / str(number), False, f"\n[state.derive]\n{table}\n")
        _one_line_exit_2("check", str(spec), said=said)
    # An expression that fails is found where states are drawn, before any is used.
    spec = _spec(tmp_path / "name", False, '\n[state.derive]\ncurrent_player = "nope(board)"\n')
    port = str(CONNECT_FOUR / "ports" / "numpy")
    said = "`nope(board)` failed: NameError: name 'nope' is not defined"
    _one_line_exit_2("verify", str(spec), "--port", port, "--levels", "l1", said=said)
    # And `check` finds a derivation the reference's own reset state does not meet.
    spec = _spec(tmp_path / "reset", False, '\n[state.derive]\ncurrent_player = "1"\n')
    with pytest.raises(SpecError, match=r"reset state holds 0, `1` gives 1; derive only"):
        check_spec(str(spec))


def test_a_port_refusing_most_drawn_positions_fails_with_the_count_and_the_fix(
    tmp_path: Path,
) -> None:
    report = _verify(_spec(tmp_path, derive=False), _port(tmp_path, FROM_COUNTS))
    transition = _level(report, "l1.transition")
    assert not transition.passed and not report.passed, report.text()
    message = transition.divergences[0].message
    refused = re.search(r"could not hold (\d+) of (\d+) drawn states", message)
    assert refused and int(refused[1]) > 0.25 * int(refused[2]), message
    assert "above the ceiling of 25%" in message and "[state.derive]" in message
    # Positions the reference reached in play are held: those checks pass.
    assert _level(report, "l1.endings").passed, report.text()


def test_below_the_ceiling_refused_positions_are_a_gap_never_a_pass(tmp_path: Path) -> None:
    spec = _spec(tmp_path, derive=False, extra="\n[levels]\nunheld_ceiling = 0.95\n")
    report = _verify(spec, _port(tmp_path, FROM_COUNTS))
    assert report.passed, report.text()
    gaps = [g for g in report.gaps if g.check == "l1.transition"]
    assert len(gaps) == 1 and gaps[0].kind == "drawn states not held", report.gaps
    refused = re.search(r"could not hold (\d+) of 60 drawn states \(\d+%\)", gaps[0].detail)
    assert refused and int(refused[1]) > 0, gaps[0].detail
    transition = _level(report, "l1.transition")
    assert transition.steps_compared == 60 - int(refused[1])
    as_json = json.loads(report.model_dump_json())
    assert any("could not hold" in g["detail"] for g in as_json["gaps"])
    assert "drawn states not held" in report.text()


def test_with_the_mover_derived_such_a_port_holds_every_drawn_position(tmp_path: Path) -> None:
    report = _verify(_spec(tmp_path, derive=True), _port(tmp_path, FROM_COUNTS))
    assert report.passed and not report.gaps, report.text()


def test_refusing_a_position_the_reference_reached_in_play_diverges(tmp_path: Path) -> None:
    # Every game's last positions hold six pieces or more.
    report = _verify(_spec(tmp_path, derive=True), _port(tmp_path, "ones + twos < 6"))
    endings = _level(report, "l1.endings")
    assert not endings.passed, report.text()
    assert "the port cannot hold its state" in endings.divergences[0].message


def test_l2_counts_the_drawn_loads_a_port_cannot_hold(tmp_path: Path) -> None:
    spec = _spec(tmp_path, derive=False, extra="\n[levels]\nunheld_ceiling = 0.95\n")
    options = VerifyOptions(target="numpy", levels=("l2",), examples=10)
    report = verify(str(spec), str(_port(tmp_path, FROM_COUNTS)), options)
    assert _level(report, "l2.interaction").passed, report.text()
    gaps = [g.detail for g in report.gaps if g.check == "l2.interaction"]
    refused = re.search(r"could not hold (\d+) of (\d+) drawn states", " ".join(gaps))
    assert refused and 0 < int(refused[1]) < int(refused[2]), report.text()


def test_a_can_hold_answering_other_than_a_bool_per_state_fails_as_the_ports_error(
    tmp_path: Path,
) -> None:
    report = _verify(_spec(tmp_path, derive=False), _port(tmp_path, "True"))
    transition = _level(report, "l1.transition")
    assert not transition.passed and report.error is None, report.text()
    assert "`can_hold` answered bool of shape ()" in transition.divergences[0].message


def test_l3_fails_a_port_that_cannot_hold_a_state_the_reference_played(tmp_path: Path) -> None:
    # The port's error, narrowed to the episode and the step the reference played into it.
    options = VerifyOptions(target="numpy", levels=("l3",), episodes=4, steps=20, explore_steps=0)
    port = _port(tmp_path, "ones + twos < 6")
    report = verify(str(_spec(tmp_path, derive=True)), str(port), options)
    assert not report.passed, report.text()
    text = report.text()
    assert "the port cannot hold 1 of" in text and "states the reference reached in play" in text
    assert re.search(r"L3 resync, episode \d+ .*step \d+: the port raised", text), text
    # The plain interpreter's sample of the same steps leaves out what the port cannot hold
    # (a bridge of fixed slots cannot even be handed such a state) and says so.
    plain = _level(report, "l3.plain")
    assert any("sampled states (its `can_hold`)" in gap.detail for gap in plain.gaps), plain
    assert 0 < plain.steps_compared < 64


# Proposed cases on the empty board: the first has player_1 to move, which a port deriving
# the mover from the counts cannot hold; the others are positions play reaches.
CASES = """
[[case]]
state = { current_player = 1 }
actions = [3, 3]

[[case]]
state = { current_player = 0 }
actions = [3, 4]

[[case]]
state = { "board.c3" = [1], current_player = 1 }
actions = [2, 2]

[[case]]
state = { "board.c3" = [1, 2], current_player = 0 }
actions = [3, 5]
"""


def test_a_proposed_case_the_port_cannot_hold_is_a_gap_with_the_count(tmp_path: Path) -> None:
    proposed = tmp_path / "proposed"
    proposed.mkdir()
    (proposed / "openings.toml").write_text(CASES)
    options = VerifyOptions(
        target="numpy", levels=("l3",), episodes=2, steps=10, explore_steps=0, cases=proposed
    )
    report = verify(str(_spec(tmp_path, derive=True)), str(_port(tmp_path, FROM_COUNTS)), options)
    cases = next(level for level in report.levels if level.level == "cases")
    assert cases.passed and report.passed, report.text()
    assert cases.episodes == 3, report.text()  # the three it holds, played and compared
    gaps = [g for g in report.gaps if g.check == "cases"]
    assert len(gaps) == 1, report.text()
    assert "could not hold 1 of 4 proposed start states (25%)" in gaps[0].detail
    assert "could not hold 1 of 4 proposed start states" in report.text()


def test_an_explored_start_the_port_cannot_hold_diverges_naming_can_hold(tmp_path: Path) -> None:
    # Every explored rollout starts from a position the reference reached in play: a port
    # refusing one fails, said as `can_hold`'s refusal, and the rollouts it holds still run.
    options = VerifyOptions(target="numpy", levels=("l3",), episodes=2, steps=6, explore_steps=300)
    port = _port(tmp_path, "ones + twos < 4")
    report = verify(str(_spec(tmp_path, derive=True)), str(port), options)
    explore = _level(report, "l3.explore")
    assert not explore.passed, report.text()
    said = [d.message for d in explore.divergences]
    refused = [m for m in said if "the port cannot hold its start state (`can_hold` refused" in m]
    assert refused and "states the reference reached in play" in refused[0], said
    assert explore.episodes > 0, report.text()  # the held ones were played and compared


# A labelled test port: CartPole's known-good NumPy port plus a `can_hold` refusing states
# with the cart right of centre.
CARTPOLE_CAN_HOLD = '''

def can_hold(ref):
    """Test subject (not model output): one env's state; it holds carts left of centre."""
    return bool(np.asarray(ref["physics"])[0] <= 0.0)
'''


def test_a_probe_counts_the_states_the_port_cannot_hold(tmp_path: Path) -> None:
    # A probe's drawn states are made up like the transition's: the ones the port refuses
    # are counted and not probed (about half here: past the ceiling, the probe fails).
    port = tmp_path / "port"
    shutil.copytree(ROOT / "examples" / "cartpole" / "ports" / "numpy", port)
    env = port / "env.py"
    env.write_text(env.read_text() + CARTPOLE_CAN_HOLD)
    options = VerifyOptions(target="numpy", levels=("l1",), examples=40)
    report = verify(str(ROOT / "examples" / "cartpole"), str(port), options)
    probes = [level for level in report.levels if level.name.startswith("l1.physics.")]
    assert probes, report.text()
    for probe in probes:
        message = probe.divergences[0].message if probe.divergences else ""
        refused = re.search(r"could not hold (\d+) of (\d+) drawn states", message)
        assert not probe.passed and refused and int(refused[1]) > 0, report.text()
        assert probe.steps_compared == int(refused[2]) - int(refused[1])
