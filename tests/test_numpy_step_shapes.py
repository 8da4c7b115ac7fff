"""A NumPy port whose step answers a scalar where the contract wants one row per env is a
failed check naming the output, not a crash of the verifier (found by the automatic mutation
score: cosmic-ray's `>=` -> `is not` made `truncated` a Python bool)."""

from __future__ import annotations

from pathlib import Path

from helpers import CARTPOLE, run_envport


def test_a_scalar_step_output_is_the_ports_error_not_a_verifier_crash(
    numpy_port_copy: Path,
) -> None:
    env = numpy_port_copy / "env.py"
    source = env.read_text()
    mutated = source.replace(
        "truncated = self.elapsed >= MAX_STEPS", "truncated = self.elapsed is not MAX_STEPS"
    )
    assert mutated != source
    env.write_text(mutated)
    done = run_envport(
        "verify", str(CARTPOLE), "--port", str(numpy_port_copy), "--levels", "l1", "--examples", "5"
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    # A failed check like any other: its line, the port's words, no frame of envport's own
    # adapter shown as the port's.
    assert "FAIL l1.transition" in done.stdout
    assert "answered `truncated` shaped () for a batch of" in done.stdout
    assert "numpy_port.py" not in done.stdout
