"""A target's own tolerances (`[targets.<name>.tolerance]`) over the spec's `[tolerance]`.

mpe_simple_spread's spec states the NumPy port's bit-identity (p_pos within 1e-12); its
float32 JAX port is held to the bounds its target writes. Each test is the slip it stops:
a JAX port judged by the NumPy port's bounds (or the NumPy port by the JAX port's), a
target's bound that drops the spec's other bounds for that field, and a misspelt field
that would leave a port judged by bounds nobody wrote.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from envport.spec import Tolerance, load_spec
from envport.tolerance import overridden
from envport.verifiers.reporting.compare import Steps, divergent_steps

from helpers import ROOT, run_envport

SPREAD = ROOT / "examples" / "mpe_simple_spread"


def _steps(obs: np.ndarray, reward: np.ndarray) -> Steps:
    return Steps(obs[None], reward[None], np.zeros(1, bool), np.zeros(1, bool))


def test_a_targets_tolerance_is_the_one_its_port_is_compared_with() -> None:
    spec = load_spec(SPREAD)
    obs = np.zeros((3, 18), np.float32)
    reward = np.asarray([-1.0, -1.0, -1.0])
    drifted = obs.copy()
    drifted[1, 4] = 5e-5  # a float32 step's drift: within jax's 1e-4, not the spec's 1e-6
    expected, actual = _steps(obs, reward), _steps(drifted, reward)
    rows = np.asarray([0])
    assert divergent_steps(spec.for_target("jax"), expected, actual, False, rows) == []
    ((_, diffs),) = divergent_steps(spec.for_target("numpy"), expected, actual, False, rows)
    assert [(d.field, d.atol) for d in diffs] == [("agent_1.obs[4] (landmark_0.x rel)", 1e-6)]
    # A bound the target leaves out is the spec's: p_pos's rtol stays 0, not the default.
    seen = spec.for_target("jax").tolerance_for("p_pos.agent_2")
    assert (seen.atol, seen.rtol, seen.bounds(True)) == (2e-6, 0.0, (1e-2, 0.0))
    assert spec.tolerance_for("p_pos.agent_2").atol == 1e-12  # the spec itself unchanged


def test_a_target_overrides_only_the_fields_and_bounds_it_writes() -> None:
    spec = {
        "obs": Tolerance(atol=1e-6, rtol=0.0),
        "reward": Tolerance(atol=1e-12, rtol=0.0),
    }
    merged = overridden(spec, {"obs": Tolerance(free_atol=0.05)})
    assert merged["obs"] == Tolerance(atol=1e-6, rtol=0.0, free_atol=0.05)
    assert merged["reward"] is spec["reward"]


def _spread_with(tmp_path: Path, table: str) -> Path:
    copy = tmp_path / "spread"
    shutil.copytree(SPREAD, copy, ignore=shutil.ignore_patterns("ports", "__pycache__"))
    toml = copy / "envport.toml"
    text = toml.read_text()
    start = text.index("[targets.jax.tolerance]")
    end = text.index("[[targets.jax.modules]]")
    toml.write_text(text[:start] + table + "\n\n" + text[end:])
    return copy


def test_a_target_tolerance_naming_no_spec_field_is_one_line(tmp_path: Path) -> None:
    spec = _spread_with(tmp_path, "[targets.jax.tolerance]\np_poss = { atol = 1e-5 }")
    result = run_envport("check", str(spec))
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "key `targets.jax.tolerance.p_poss` overrides no field of `[tolerance]`" in (
        result.stderr
    )
    misspelt = _spread_with(tmp_path / "b", "[targets.jax.tolerance]\np_pos = { atoll = 1e-5 }")
    result = run_envport("check", str(misspelt))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "key `targets.jax.tolerance.p_pos.atoll` is not a spec key" in result.stderr
