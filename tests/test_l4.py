"""L4 transfer: policies trained on port and reference, evaluated on both, paired TOST.

Budgets are the examples' own (`[levels.l4]`): small on purpose, NumPy ports, so each run
takes seconds. `envport verify SPEC --port DIR --levels l4` is the same check.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from envport.cli import build_parser
from envport.errors import EnvportError
from envport.verifiers.selfcheck import Mutant, apply_mutant
from envport.verifiers.stats.tost import paired_tost
from envport.verifiers.verify import DEFAULT_LEVELS, LEVELS, VerifyOptions, verify

from helpers import CARTPOLE, NUMPY_PORT, ROOT

FROZENLAKE = ROOT / "examples" / "frozenlake"
L4 = VerifyOptions(levels=("l4",))

REWARD_09 = Mutant(
    id="numpy-reward-0.9",
    target="numpy",
    file="env.py",
    old="reward = np.ones(self.num_envs)",
    new="reward = np.full(self.num_envs, 0.9)",
    what="reward 0.9 per step instead of 1.0",
)


def test_l4_is_a_level_but_not_a_default_one() -> None:
    assert "l4" in LEVELS and "l4" not in DEFAULT_LEVELS
    assert VerifyOptions().levels == DEFAULT_LEVELS
    args = build_parser().parse_args(["verify", "examples/cartpole", "--port", "p"])
    assert "l4" not in args.levels


def test_tost_shows_equivalence_only_inside_the_margin() -> None:
    rng = np.random.default_rng(0)
    reference = rng.normal(100, 10, size=12)
    close = paired_tost(reference + rng.normal(0, 0.5, 12), reference, margin=2.0, alpha=0.05)
    assert close.equivalent and close.verdict == "equivalent"
    assert -2.0 < close.ci_low < close.ci_high < 2.0 and close.ci_level == pytest.approx(0.9)
    far = paired_tost(reference - 5 + rng.normal(0, 0.5, 12), reference, margin=2.0, alpha=0.05)
    assert not far.equivalent and far.verdict == "different"


def test_not_significantly_different_is_never_equivalent() -> None:
    rng = np.random.default_rng(1)
    reference = rng.normal(100, 10, size=4)
    noisy = paired_tost(reference + rng.normal(0, 8, 4), reference, margin=2.0, alpha=0.05)
    # A t-test would not reject "no difference" here; TOST does not show equivalence either.
    assert not noisy.equivalent and noisy.verdict == "not shown equivalent"
    assert noisy.power_equivalence < 0.5


def test_identical_returns_are_equivalent_with_no_spread() -> None:
    same = paired_tost(np.full(6, 500.0), np.full(6, 500.0), margin=5.0, alpha=0.05)
    assert same.equivalent and same.ci_low == same.ci_high == 0.0
    scaled = paired_tost(np.full(6, 450.0), np.full(6, 500.0), margin=5.0, alpha=0.05)
    assert not scaled.equivalent and scaled.verdict == "different"


def test_a_spec_without_a_margin_is_one_clear_error() -> None:
    mountaincar = ROOT / "examples" / "mountaincar"
    with pytest.raises(EnvportError, match=r"levels\.l4\] margin"):
        verify(str(mountaincar), str(mountaincar / "ports" / "numpy"), L4)


@pytest.mark.slow
def test_l4_passes_for_the_cartpole_port() -> None:
    report = verify(str(CARTPOLE), str(NUMPY_PORT), L4)
    assert report.passed, report.text()
    (level,) = report.levels
    stats = level.statistics
    assert level.name == "l4.transfer" and stats["trainer"] == "cem"
    assert stats["pairs"] == 2 * stats["seeds"]
    assert {p["trained_on"] for p in stats["policies"]} == {"port", "reference"}
    # The trained policies balance the pole: a reward bug of 10% would be 10x the margin.
    assert min(p["reference_return"] for p in stats["policies"]) > 300
    for key in ("mean_difference", "ci_low", "ci_high", "p_value", "power_equivalence"):
        assert key in stats
    assert level.summary().startswith("equivalent")


@pytest.mark.slow
def test_l4_fails_for_a_port_paying_0_9_per_step(tmp_path: Path) -> None:
    port = apply_mutant(REWARD_09, NUMPY_PORT, tmp_path / "numpy")
    report = verify(str(CARTPOLE), str(port), VerifyOptions(levels=("l4",), target="numpy"))
    (level,) = report.levels
    assert not report.passed
    assert level.statistics["verdict"] == "different"
    assert level.statistics["ci_high"] < -level.statistics["margin"]
    assert level.summary().startswith("NOT equivalent")
    assert level.divergences[0].replay.endswith("--levels l4")


@pytest.mark.slow
def test_l4_passes_for_the_frozenlake_port() -> None:
    report = verify(str(FROZENLAKE), str(FROZENLAKE / "ports" / "numpy"), L4)
    assert report.passed, report.text()
    stats = report.levels[0].statistics
    assert stats["trainer"] == "q_learning"
    # Slippery: the two envs' returns differ by chance, so the interval has width.
    assert stats["sd_difference"] > 0 and stats["ci_low"] < stats["ci_high"]
    assert stats["power_equivalence"] > 0.8
    assert np.mean([p["reference_return"] for p in stats["policies"]]) > 0.5


BREAKOUT = ROOT / "examples" / "minatar_breakout"
DOUBLE_BRICKS = Mutant(
    id="numpy-brick-pays-two",
    target="numpy",
    file="rules.py",
    old="reward = breaks.astype(np.float64)",
    new="reward = 2.0 * breaks.astype(np.float64)",
    what="a broken brick pays 2",
)


@pytest.mark.slow
def test_l4_trains_on_minatar_screens_and_tells_a_brick_paying_two(tmp_path: Path) -> None:
    # Box observations of 10x10x4 booleans: CEM over linear policies on the 400 cells.
    good = verify(str(BREAKOUT), str(BREAKOUT / "ports" / "numpy"), L4)
    assert good.passed, good.text()
    stats = good.levels[0].statistics
    assert stats["trainer"] == "cem" and stats["verdict"] == "equivalent"
    # Some policy breaks bricks, so a reward bug has returns to scale.
    assert max(p["reference_return"] for p in stats["policies"]) > 0
    port = apply_mutant(DOUBLE_BRICKS, BREAKOUT / "ports" / "numpy", tmp_path / "numpy")
    bad = verify(str(BREAKOUT), str(port), VerifyOptions(levels=("l4",), target="numpy"))
    # Returns of one or two bricks: doubled, the difference is about the margin, so TOST
    # cannot show equivalence ("different" or "not shown equivalent"); either fails L4.
    assert not bad.passed
    assert bad.levels[0].statistics["verdict"] != "equivalent"
    assert bad.levels[0].statistics["mean_difference"] > 0
