"""JaxMARL's MPE verified against mpe2 through its bridges
(`examples/mpe_<scenario>/ports/jaxmarl`): the verdicts of README's JaxMARL rows.

Each divergence is a rule JaxMARL's source and mpe2's differ on, named by the line that
reports it; the tests hold each verdict to exactly those rules, so a bridge that patched
behaviour (or a JaxMARL that changed) fails them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from helpers import ROOT, run_envport

pytest.importorskip("jaxmarl")
LATE = "truncated: expected True, got False"


def _verify(scenario: str, *args: str) -> tuple[int, str]:
    example = ROOT / "examples" / f"mpe_{scenario}"
    done = run_envport(
        "verify", str(example), "--port", str(example / "ports" / "jaxmarl"),
        "--target", "jax", *args, timeout=900,
    )  # fmt: skip
    return done.returncode, done.stdout + done.stderr


def _failed(out: str) -> set[str]:
    return set(re.findall(r"^FAIL (\S+):", out, re.MULTILINE))


def _differences(out: str) -> set[str]:
    """Each field line of a divergence (`  truncated: expected True, got False`)."""
    return set(re.findall(r"^  (\S[^:\n]*: expected .*)$", out, re.MULTILINE))


def test_the_bridges_are_one_file_each() -> None:
    # The env is JaxMARL's own, untouched: the bridge only maps the contract onto it.
    for scenario in ("simple_spread", "simple_tag"):
        bridge = ROOT / "examples" / f"mpe_{scenario}" / "ports" / "jaxmarl"
        assert sorted(p.name for p in Path(bridge).glob("*.py")) == ["env.py"], scenario


@pytest.mark.slow
def test_jaxmarl_simple_spread_truncates_a_step_late_and_differs_in_nothing_else() -> None:
    """mpe2 counts the cycle, then truncates at 25; JaxMARL's `step_env` tests the count
    before adding the step, so its episode has 26. Every level names that, and only that:
    physics, observations, rewards and resets agree within the jax target's tolerances."""
    code, out = _verify("simple_spread")
    assert code == 1 and "DIVERGED" in out, out
    assert _failed(out) == {"l1.transition", "l1.landings", "l3.free", "l3.resync", "l3.plain"}
    assert _differences(out) == {LATE}, out
    assert "steps: 24" in out and "step 24: free-running" in out
    for check in ("l2.interaction", "l2.batch", "l2.reset", "l3.bounds"):
        assert f"pass {check}:" in out, check


@pytest.mark.slow
def test_jaxmarl_simple_tag_places_obstacles_as_agents() -> None:
    """mpe2's simple_tag draws its obstacles in U(-0.9, 0.9); JaxMARL's SimpleTagMPE keeps
    SimpleMPE's reset, U(-1, 1) for every entity: `l2.reset` names the obstacles' relative
    positions. Its sequences meet the late truncation too."""
    code, out = _verify("simple_tag", "--levels", "l2")
    assert code == 1, out
    assert _failed(out) == {"l2.interaction", "l2.reset"}, out
    assert re.search(r"FAIL l2\.reset: .*differ: adversary_0\.obs\[4\] \(landmark_0\.x rel\)", out)
    drawn = _differences(out) - {LATE}
    assert drawn and all(re.match(r"\w+\.obs\[\d+\] \(landmark_\d\.[xy] rel\): ", d) for d in drawn)
