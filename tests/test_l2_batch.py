"""`l2.batch` never asks the port for what the reference cannot do, and a port that crashes
there is reported with its own words, the env, its state and the action."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from envport.serve.ops import BatchVsSingle, Op
from envport.spec import load_spec
from envport.targets.reference import Reference
from envport.verifiers.levels.l2.batch import check_batch

from helpers import CARTPOLE, NUMPY_PORT, started_worker


class Recording:
    """The real worker, with the batches it was sent kept for the test to read."""

    def __init__(self, worker: Any) -> None:
        self.worker = worker
        self.batches: list[BatchVsSingle] = []

    def request(self, op: Op, timeout: float | None = None) -> Any:
        if isinstance(op, BatchVsSingle):
            self.batches.append(op)
        return self.worker.request(op, timeout)


def _spec_with_batches(sizes: list[int]) -> Any:
    spec = load_spec(CARTPOLE)
    l2 = spec.levels.l2.model_copy(update={"batch": sizes})
    levels = spec.levels.model_copy(update={"l2": l2})
    return spec.model_copy(update={"levels": levels})


def _episode_length(reference: Reference, seed: int, actions: np.ndarray) -> int:
    reference.reset(seed)
    for step, action in enumerate(actions):
        out = reference.step(action.item())
        if out.terminated or out.truncated:
            return step + 1
    return len(actions)


@pytest.mark.slow
def test_the_batch_runs_no_step_past_the_longest_reference_episode() -> None:
    spec = _spec_with_batches([1, 7])
    reference = Reference(spec)
    with started_worker(CARTPOLE, NUMPY_PORT, "numpy") as worker:
        spy = Recording(worker)
        level = check_batch(spec, reference, spy, 0, "replay")
    assert level.passed, [d.text() for d in level.divergences]
    for sent in spy.batches:
        longest = max(_episode_length(reference, s, a) for s, a in enumerate(sent.actions))
        # Each batch is as long as its longest reference episode (20 steps at most) ...
        assert sent.actions.shape[1] == longest
    # ... so the one-env batch never steps its env past the end the reference reached.
    assert spy.batches[0].actions.shape[1] < 20


CRASH = (
    "    def step(self, actions):\n"
    "        if (self.elapsed >= 5).any():\n"
    "            board = [0, 1, 2]\n"
    "            return board[int(self.elapsed.max())]  # planted: an index past its board\n"
)


@pytest.mark.slow
def test_a_crash_names_the_env_the_step_the_state_the_action_and_the_ports_words(
    tmp_path: Path,
) -> None:
    port = tmp_path / "port"
    shutil.copytree(NUMPY_PORT, port, ignore=shutil.ignore_patterns("__pycache__"))
    env = port / "env.py"
    env.write_text(env.read_text().replace("    def step(self, actions):\n", CRASH))
    spec = _spec_with_batches([7])
    with started_worker(CARTPOLE, port, "numpy") as worker:
        level = check_batch(spec, Reference(spec), worker, 0, "replay")
    assert not level.passed
    (crash,) = level.divergences
    assert crash.episode == 0 and crash.step == 5
    assert "the port crashed stepping env 0 (alone) at step 5, action" in crash.message
    assert "IndexError: list index out of range" in crash.message
    assert "board[int(self.elapsed.max())]" in crash.message  # the port's own frame
    assert set(crash.start_state) == {"physics", "elapsed_steps"}
    assert crash.start_state["elapsed_steps"] == 5 and len(crash.action_prefix) == 6


PANIC = (
    "{\n    let board = [0u8; 3];\n"
    "    for s in state.chunks_exact(STATE_SIZE) {\n"
    "        let i = s[4] as usize;\n"
    "        if i >= 5 {\n"
    "            let _ = board[i]; // planted: an index past its board\n"
    "        }\n"
    "    }\n"
    "    let rows = state"
)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("cargo") is None, reason="cargo is not installed")
def test_a_rust_panic_is_reported_with_its_own_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ENVPORT_CACHE_DIR", str(tmp_path / "cache"))
    # With a backtrace, as CI's machine sets: its frames are symbolised while the check
    # moves on, and the panic's words must still be the ones told.
    monkeypatch.setenv("RUST_BACKTRACE", "1")
    port = tmp_path / "rust"
    shutil.copytree(
        CARTPOLE / "ports" / "rust", port, ignore=shutil.ignore_patterns("target", "Cargo.lock")
    )
    lib = port / "src" / "lib.rs"
    source = lib.read_text()
    assert source.count("{\n    let rows = state") == 1
    lib.write_text(source.replace("{\n    let rows = state", PANIC))
    spec = _spec_with_batches([7])
    with started_worker(CARTPOLE, port, "rust") as worker:
        level = check_batch(spec, Reference(spec), worker, 0, "replay")
    assert not level.passed
    (crash,) = level.divergences
    assert crash.episode == 0 and crash.step == 5
    assert "envport_step returned 1" in crash.message
    # The panic's own words, from the worker's output while it answered.
    assert "panicked at src/lib.rs" in crash.message
    assert "index out of bounds: the len is 3 but the index is 5" in crash.message
