"""A port wrong only at the sizes people use: a power of two of 1024 envs or more.

l2.sizes once stepped 2^k + 1 and 1031 envs, never 1024 or 4096, and `envport bench` timed
sizes it never checked: such a port verified, and bench printed its speed.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from envport.spec import load_spec
from envport.targets.reference import Reference
from envport.verifiers.levels.l2.sizes import check_sizes

from helpers import CARTPOLE, NUMPY_PORT, run_envport, started_worker

REWARD = "        reward = np.ones(self.num_envs)\n"


def _planted(tmp_path: Path, when: str) -> Path:
    """CartPole's known-good NumPy port, its reward doubled when `when` holds."""
    port = tmp_path / "numpy"
    shutil.copytree(NUMPY_PORT, port, ignore=shutil.ignore_patterns("__pycache__"))
    env = port / "env.py"
    text = env.read_text()
    assert text.count(REWARD) == 1
    planted = f"{REWARD}        if {when}:\n            reward = reward * 2  # planted\n"
    env.write_text(text.replace(REWARD, planted))
    return port


@pytest.fixture
def wrong_at_powers_of_two(tmp_path: Path) -> Path:
    """Wrong only for 1024, 2048, 4096, ... envs."""
    return _planted(tmp_path, "self.num_envs >= 1024 and self.num_envs & (self.num_envs - 1) == 0")


def test_verify_fails_l2_sizes_at_the_power_of_two(wrong_at_powers_of_two: Path) -> None:
    done = run_envport(
        "verify", str(CARTPOLE), "--port", str(wrong_at_powers_of_two),
        "--levels", "l2", "--examples", "5", "--fail-fast",
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FAIL l2.sizes" in done.stdout, done.stdout
    # The size and the env are named, with the field that differs.
    assert "env 0 of a batch of 1024 differs from the reference's step" in done.stdout
    assert "reward: expected 1, got 2" in done.stdout
    # Only the powers of two diverge: one past them, and the prime, step as the reference's.
    for fine in (1025, 1031, 4097):
        assert f"of a batch of {fine} " not in done.stdout


def test_bench_prints_no_speed_for_a_size_the_port_gets_wrong(
    wrong_at_powers_of_two: Path, tmp_path: Path
) -> None:
    results, figure = tmp_path / "sps.json", tmp_path / "sps.png"
    done = run_envport(
        "bench", str(CARTPOLE), "--port", str(wrong_at_powers_of_two),
        "--batch-sizes", "1000,1024", "--json", str(results), "--plot", str(figure),
        "--steps", "20", "--repeats", "1", "--sync-envs", "4",
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    rows = {r["batch"]: r for r in json.loads(results.read_text())["rows"] if r["kind"] == "port"}
    assert rows[1000]["sps"] > 0 and rows[1000]["diverged"] is None  # a size it gets right
    wrong = rows[1024]
    assert wrong["sps"] == 0 and wrong["sps_runs"] == []
    assert "env 0 of a batch of 1024" in wrong["diverged"]
    assert "reward: expected 1, got 2" in wrong["diverged"]
    port_line = next(line for line in done.stdout.splitlines() if "numpy port" in line)
    assert "diverged" in port_line
    # After bench's progress lines (`bench: batch 1024 in ...`), the one line that says why.
    lines = [line for line in done.stderr.splitlines() if not line.startswith("bench: ")]
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert lines[0].startswith("envport: no speed reported at B=1024, where"), lines[0]
    assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"  # drawn from the timed sizes


def test_l2_sizes_steps_the_sizes_to_be_timed(tmp_path: Path) -> None:
    """A size only the optimisation's bench times (`translate --optimize
    --bench-batch-sizes 3000`) is stepped too, so no speed is kept for a size never checked."""
    port = _planted(tmp_path, "self.num_envs == 3000")
    spec = load_spec(CARTPOLE)
    with started_worker(CARTPOLE, port, "numpy") as worker:
        level = check_sizes(spec, Reference(spec), worker, 0, "replay", extra=(3000,))
    assert not level.passed and "3000" in (level.note or "")
    (divergence,) = level.divergences
    assert divergence.message.startswith("env 0 of a batch of 3000 differs"), divergence.message
    assert divergence.start_state["batch"] == 3000
    assert [d.field for d in divergence.fields] == ["reward"]
