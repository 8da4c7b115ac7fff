"""The MinAtar Seaquest example: the game's growing object lists (bullets, fish, subs,
divers) bridged as lists of records with a capacity, sticky actions at MinAtar's default 0.1
and both spawns as the game's own randomness mapped to the port's noise, and the known-good
NumPy and JAX ports with their mutants.

`envport verify examples/minatar_seaquest --port examples/minatar_seaquest/ports/numpy`
runs the full budgets.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from envport.spec import load_spec
from envport.structure import decode, encode
from envport.targets.reference import Reference
from envport.verifiers.coverage.determinism import check_reference_determinism
from envport.verifiers.verify import VerifyOptions, verify

from helpers import ROOT, check_failures, translated_offline, with_budgets

SEAQUEST = ROOT / "examples" / "minatar_seaquest"


def _with_objects(reference: Reference, **lists: list[list[int]]) -> dict:
    """The start state with the sub at (4, 3) and the given object lists."""
    reference.reset(0)
    raw = decode(reference.spec.state, reference.read_state())
    raw.update({"sub_x": 4, "sub_y": 3, "surface": False, **lists})
    return encode(reference.spec.state, raw)


def test_lists_round_trip_and_objects_leave_and_are_sunk() -> None:
    reference = Reference(load_spec(SEAQUEST))
    state = _with_objects(
        reference,
        f_bullets=[[9, 5, 1], [2, 6, 1]],  # the first leaves the screen, the second hits
        e_fish=[[3, 6, 0, 2], [7, 1, 1, 3]],  # the first is on the second bullet's way
        divers=[[0, 8, 0, 0]],  # moves left off the screen
    )
    reference.write_state(state)
    game = reference.env.unwrapped.game.env
    # The game's own shape: Python lists with the direction a bool.
    assert game.f_bullets == [[9, 5, True], [2, 6, True]]
    assert game.e_fish[0] == [3, 6, False, 2] and game.divers == [[0, 8, False, 0]]
    assert decode(reference.spec.state, reference.read_state())["e_fish"] == [
        [3, 6, 0, 2],
        [7, 1, 1, 3],
    ]
    out = reference.step(0)
    after = decode(reference.spec.state, reference.read_state())
    assert out.reward == 1.0  # the second bullet sank the first fish
    assert after["f_bullets"] == [] and after["divers"] == []
    assert after["e_fish"] == [[7, 1, 1, 2]]
    assert int(reference.read_state()["e_fish.length"]) == 1


def test_a_spawn_takes_its_side_kind_and_row_from_the_noise() -> None:
    reference = Reference(load_spec(SEAQUEST))
    for seed in range(6):
        state = _with_objects(reference)
        state["e_spawn_timer"] = np.int64(0)
        state["d_spawn_timer"] = np.int64(0)
        reference.reset(seed)
        reference.write_state(state)
        out = reference.step(0)
        after = decode(reference.spec.state, reference.read_state())
        noise = np.asarray(out.noise, dtype=np.float64)
        assert noise.shape == (6,) and ((noise >= 0) & (noise < 1)).all()
        kind = "e_subs" if noise[2] < 1 / 3 else "e_fish"
        (enemy,) = after[kind]
        right = noise[1] < 0.5
        # Spawned at its edge, then walked this frame (its move timer is not yet 0).
        assert enemy[:3] == [0 if right else 9, 1 + int(noise[3] * 8), int(right)]
        (diver,) = after["divers"]
        assert diver[1:3] == [1 + int(noise[5] * 8), int(noise[4] < 0.5)]


def test_the_reference_is_deterministic_given_its_declared_draws() -> None:
    spec = load_spec(SEAQUEST)
    check_reference_determinism(spec, Reference(spec), 0)


def _cut_noise_samples(tmp_path: Path) -> Path:
    spec = tmp_path / "seaquest"
    shutil.copytree(SEAQUEST, spec, ignore=shutil.ignore_patterns("ports", "__pycache__"))
    toml = spec / "envport.toml"
    text = toml.read_text()
    assert text.count('generator = "unwrapped.game.random"\n') == 1
    toml.write_text(
        text.replace(
            'generator = "unwrapped.game.random"\n',
            'generator = "unwrapped.game.random"\nsamples = 3000\n',
        )
    )
    return spec


@pytest.mark.slow
@pytest.mark.parametrize("target", ["numpy", "jax"])
def test_the_known_good_ports_verify(target: str, tmp_path: Path) -> None:
    # Budgets cut to keep the tier's time, the noise tests' samples too; every check runs.
    options = VerifyOptions(target=target, examples=60, episodes=20)
    spec = _cut_noise_samples(tmp_path)
    report = verify(str(spec), str(SEAQUEST / "ports" / target), options)
    assert report.passed, report.text()
    assert {level.level for level in report.levels} == {"l1", "l2", "l3"}


def test_the_jax_session_is_labelled_hand_written() -> None:
    session = json.loads((SEAQUEST / "replay" / "jax" / "session.json").read_text())
    assert {entry["source"] for entry in session["entries"]} == {"hand-written"}


@pytest.mark.slow
def test_seaquest_translates_offline_and_the_full_crew_slip_is_repaired(tmp_path: Path) -> None:
    """The session's rules leave a full crew at 0 divers after surfacing (the comment above
    MinAtar's `_surface`, not its code, which leaves -1): the env module's surfacing probe
    finds it, the repair fixes rules.py, and every level passes on the repaired port."""
    # The slip is the surfacing probe's: the whole-port checks run at small budgets.
    small = {
        "levels.l1": {"examples": 60},
        "levels.l2": {"examples": 10},
        "levels.l3": {"episodes": 10},
        "coverage": {"explore_steps": 0},
        "randomness": {"samples": 320},  # the sampled-step check's n, not its DKW design's
    }
    spec = with_budgets(SEAQUEST, tmp_path / "minatar_seaquest", small)
    run = translated_offline(spec, "jax", tmp_path / "runs", timeout=2400)
    failed = check_failures(run)
    assert failed and "diver_count: expected -1, got 0" in failed[0], failed
    # The repaired rules are the repair's answer: the known-good port's rules before issue
    # 51's optimise round (which the session reaches only with --optimize).
    answer = (SEAQUEST / "replay" / "jax" / "001-repair.md").read_text()
    repaired = answer[answer.index("```python\n") + len("```python\n") : answer.rindex("```")]
    rules = (run / "port" / "rules.py").read_text()
    assert rules == repaired
    assert "- surfacing.astype(jnp.int32)" in rules
