"""The state a step leaves behind: L1's transition check and L3's resync steps compare it
beside the step's outputs (envport/verifiers/reporting/after.py), and a fault of the batch's
size is named as such, not as non-determinism.

Each port here is CartPole's known-good NumPy port with one edit, in tmp_path: a real
worker in its sandbox, the real Gymnasium reference.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np

from envport.serve.answers import problem
from envport.serve.ops import StepBatch
from envport.spec import load_spec
from envport.verifiers.draws.policies import EpisodePlan
from envport.verifiers.levels.l3.left import state_divergences
from envport.verifiers.levels.l3.played import Played
from envport.verifiers.reporting.after import after_diffs
from envport.verifiers.reporting.compare import Steps
from envport.verifiers.verify import VerifyOptions, verify

from helpers import CARTPOLE, NUMPY_PORT


def _edited(tmp_path: Path, old: str, new: str) -> Path:
    port = tmp_path / "port"
    shutil.copytree(NUMPY_PORT, port, ignore=shutil.ignore_patterns("__pycache__"))
    env = port / "env.py"
    text = env.read_text()
    assert text.count(old) == 1
    env.write_text(text.replace(old, new))
    return port


# Truncation still comes at the 500th step (computed from the counter plus one), so every
# output of every step agrees; only the state a step leaves is behind by one.
HIDDEN_COUNTER = (
    "        self.elapsed += 1\n        terminated = is_terminated(self.physics)\n"
    "        truncated = self.elapsed >= MAX_STEPS",
    "        terminated = is_terminated(self.physics)\n"
    "        truncated = self.elapsed + 1 >= MAX_STEPS",
)


def _transition(port: Path) -> Any:
    options = VerifyOptions(target="numpy", levels=("l1",), examples=12, shrink=False)
    report = verify(str(CARTPOLE), str(port), options)
    return next(level for level in report.levels if level.mode == "transition")


def test_a_step_counter_the_port_never_advances_is_named_by_its_field(tmp_path: Path) -> None:
    port = _edited(tmp_path, *HIDDEN_COUNTER)
    level = _transition(port)
    assert not level.passed
    divergence = level.divergences[0]
    assert "leaves another state" in divergence.message
    assert [d.field for d in divergence.fields] == ["state.elapsed_steps"]
    assert divergence.fields[0].actual == divergence.fields[0].expected - 1


def test_resync_names_the_hidden_counter_at_the_first_step_of_each_episode(
    tmp_path: Path,
) -> None:
    port = _edited(tmp_path, *HIDDEN_COUNTER)
    options = VerifyOptions(target="numpy", levels=("l3",), episodes=3, shrink=False)
    report = verify(str(CARTPOLE), str(port), options)
    by_mode = {level.mode: level for level in report.levels}
    # Free-running compares outputs only, and they agree within 500 steps.
    assert by_mode["free"].passed
    resync = by_mode["resync"]
    assert not resync.passed and resync.diverged_episodes == 3
    first = resync.divergences[0]
    assert first.step == 0 and [d.field for d in first.fields] == ["state.elapsed_steps"]


def test_a_port_that_skips_its_last_env_is_told_by_batch_size(tmp_path: Path) -> None:
    # The last env of every batch is never stepped: its answers are its start state's.
    port = _edited(
        tmp_path,
        "        self.physics = dynamics(self.physics, np.asarray(actions))\n",
        "        stepped = dynamics(self.physics, np.asarray(actions))\n"
        "        self.physics = np.concatenate([stepped[:-1], self.physics[-1:]])\n",
    )
    level = _transition(port)
    assert not level.passed
    message = level.divergences[0].message
    assert "batch's size" in message and "last env" in message, message
    assert "the same step twice gave different answers" not in message


def test_resync_names_each_episodes_first_step_that_leaves_another_state() -> None:
    spec = load_spec(CARTPOLE)
    # Two episodes of three steps; the reference's state before each step.
    physics = np.arange(24, dtype=np.float64).reshape(6, 4) / 100
    elapsed = np.asarray([0, 1, 2, 0, 1, 2])
    played = Played(
        [EpisodePlan(0, 0, "random", None), EpisodePlan(1, 1, "random", None)],
        np.asarray([3, 3]),
        {"physics": physics, "elapsed_steps": elapsed},
        np.zeros(6, dtype=np.int64),
        Steps(np.zeros((6, 4), np.float32), np.ones(6), np.zeros(6, bool), np.zeros(6, bool)),
    )
    # The port's state after each step: right, except episode 1's second step (row 4),
    # whose counter is off, and the float noise of a float32 port, which is within tolerance.
    after = {
        "physics": np.roll(physics, -1, axis=0) + 1e-7,
        "elapsed_steps": np.roll(elapsed, -1),
    }
    after["elapsed_steps"][4] = 7
    found = state_divergences(spec, played, after)
    assert [(row, [d.field for d in diffs]) for row, diffs in found] == [
        (4, ["state.elapsed_steps"])
    ]
    # An episode's last step (rows 2 and 5) has no next state of the reference's: not judged.
    after["elapsed_steps"][[2, 5]] = 99
    assert [row for row, _ in state_divergences(spec, played, after)] == [4]


def test_a_state_field_is_held_to_its_own_tolerance_under_the_state_label() -> None:
    # Acrobot's physics has atol 1e-4: a float32 port's 5e-5 is within it, named `state.`
    # or not (the label once made the lookup miss the spec's entry and use the default 1e-5).
    spec = load_spec(CARTPOLE.parent / "acrobot")
    expected = {"physics": np.array([0.1, 0.2, 0.3, 0.4]), "elapsed_steps": np.asarray(3)}
    within = {"physics": expected["physics"] + 5e-5, "elapsed_steps": np.asarray(3)}
    assert after_diffs(spec, expected, {k: np.asarray(v)[None] for k, v in within.items()}, 0) == []
    beyond = {"physics": expected["physics"] + [0, 0, 0, 1e-3], "elapsed_steps": np.asarray(4)}
    found = after_diffs(spec, expected, {k: np.asarray(v)[None] for k, v in beyond.items()}, 0)
    assert [d.field for d in found] == ["state.physics[3]", "state.elapsed_steps"]


def test_a_state_read_of_the_wrong_rows_is_a_malformed_answer() -> None:
    rows = np.zeros(3, dtype=np.int64)
    asked = StepBatch(states={"physics": np.zeros((3, 4))}, actions=rows, read_state=True)
    steps = {
        "obs": np.zeros((3, 4), np.float32),
        "reward": np.ones(3),
        "terminated": np.zeros(3, bool),
        "truncated": np.zeros(3, bool),
    }
    assert problem(asked, {**steps, "state": None}) is None
    assert problem(asked, {**steps, "state": {"physics": np.zeros((3, 4))}}) is None
    wrong = problem(asked, {**steps, "state": {"physics": np.zeros((2, 4))}})
    assert wrong is not None and "`state.physics`" in wrong and "3 rows" in wrong
