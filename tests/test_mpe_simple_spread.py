"""Agents moving at once: mpe2's simple_spread (a PettingZoo Parallel env) as the reference
(examples/mpe_simple_spread).

The reference presented as one env of joint actions (every agent's observation stacked, one
reward per agent, the episode's endings), divergences naming the agent and the field, a
written state stepped from a fresh cycle after an episode ended, `envport init` on a
Parallel env (simple_tag's too: its agents observe different lengths), the spec's one-line
errors, and (slow) the known-good NumPy port verifying and mutants caught by name, and
(slow) the float32 JAX port verifying within its target's tolerances.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from gymnasium import spaces

from envport.errors import SpecError
from envport.spec import load_spec
from envport.targets.reference import Reference
from envport.verifiers.reporting.compare import Steps, divergent_steps
from envport.verifiers.selfcheck import apply_mutant, load_mutants
from envport.verifiers.verify import VerifyOptions, verify

from helpers import ROOT, assert_known_good_parallel_port_verifies, divergent_fields, run_envport

pytest.importorskip("mpe2")

SPREAD = ROOT / "examples" / "mpe_simple_spread"
AGENTS = ["agent_0", "agent_1", "agent_2"]
OBS = 18  # one agent's observation: vel, pos, 3 landmarks, 2 others, 2 comms


def test_the_reference_is_one_env_of_joint_actions() -> None:
    reference = Reference(load_spec(SPREAD))
    assert reference.action_space == spaces.MultiDiscrete([5, 5, 5])
    start = reference.reset(0)
    assert start.shape == (3, OBS) and start.dtype == np.float32
    state = reference.read_state()
    # Agent 1's row is agent 1's own view: its position, and landmark 0 relative to it.
    assert np.allclose(start[1, 2:4], state["p_pos.agent_1"])
    assert np.allclose(start[1, 4:6], state["p_pos.landmark_0"] - state["p_pos.agent_1"])
    # Only agent 0 pushes +x: only its velocity moves (no contact at this start).
    moved = reference.step(np.asarray([2, 0, 0]))
    assert moved.reward.shape == (3,) and not moved.terminated and not moved.truncated
    assert moved.obs[0, 0] == np.float32(0.5) and moved.obs[1, 0] == 0 and moved.obs[2, 0] == 0
    for _ in range(24):
        last = reference.step(np.asarray([0, 0, 0]))
    assert last.truncated and not last.terminated  # max_cycles 25: truncated at the 25th


def test_a_state_written_after_the_episode_ended_steps_from_a_fresh_cycle() -> None:
    """PettingZoo empties `agents` when an episode ends; the bridge's `fresh_cycle` brings
    every agent back, and the next reset still has its agents (a selector sharing the env's
    list of agents would have none and divide by zero)."""
    reference = Reference(load_spec(SPREAD))
    reference.reset(3)
    written = reference.read_state()
    for _ in range(25):
        reference.step(np.asarray([1, 2, 3]))
    reference.write_state(written)
    again = reference.step(np.asarray([1, 2, 3]))
    assert again.obs.shape == (3, OBS) and not again.truncated
    assert reference.read_state()["steps"] == 1
    # A written last cycle ends the episode (PettingZoo removes every agent); the next
    # reset and step still have all three.
    reference.write_state({**written, "steps": np.asarray(24)})
    assert reference.step(np.asarray([0, 0, 0])).truncated
    assert reference.reset(4).shape == (3, OBS)
    assert reference.step(np.asarray([0, 0, 0])).reward.shape == (3,)


def test_a_divergence_names_the_agent_and_the_field() -> None:
    spec = load_spec(SPREAD)
    want = Reference(spec).reset(0)
    got = want.copy()
    got[2, 4] += 0.5  # agent 2's view of landmark 0
    rewards = np.asarray([[-1.0, -0.5, -1.0]])
    expected = Steps(want[None], rewards, np.zeros(1, bool), np.zeros(1, bool))
    actual = Steps(got[None], np.asarray([[-1.0, 0.0, -1.0]]), np.zeros(1, bool), np.ones(1, bool))
    ((_, diffs),) = divergent_steps(spec, expected, actual, False, np.asarray([0]))
    shown = {d.field: d for d in diffs}
    assert set(shown) == {"agent_2.obs[4] (landmark_0.x rel)", "agent_1.reward", "truncated"}
    # An agent's field takes its field's tolerance from the spec (obs: atol 1e-6).
    assert shown["agent_2.obs[4] (landmark_0.x rel)"].atol == 1e-6
    assert (shown["agent_1.reward"].expected, shown["agent_1.reward"].actual) == (-0.5, 0.0)


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        (
            "mpe2.simple_spread_v3:parallel_env",
            [
                "a PettingZoo Parallel env (agents agent_0, agent_1, agent_2;",
                "actions Discrete(5), observations float32[18] each",
                "`[parallel] agents = ['agent_0', 'agent_1', 'agent_2']` and a state bridge",
                "examples/mpe_simple_spread",
            ],
        ),
        (
            # Agents observing different lengths: each agent's spaces, and the lengths to
            # declare (docs/spec.md, Agents moving at once).
            "mpe2.simple_tag_v3:parallel_env",
            [
                "adversary_2: actions Discrete(5), observations float32[16]; agent_0: "
                "actions Discrete(5), observations float32[14])",
                "`[parallel] agents = ['adversary_0', 'adversary_1', 'adversary_2', "
                "'agent_0']` and `observation_sizes = [16, 16, 16, 14]`",
                "examples/mpe_simple_tag",
            ],
        ),
    ],
)
def test_init_names_a_parallel_envs_agents_and_spaces_and_stops_at_the_bridge(
    entry: str, said: list[str], tmp_path: Path
) -> None:
    out = tmp_path / "spec"
    result = run_envport("init", entry, "--out", str(out))
    assert result.returncode == 2, result.stdout + result.stderr
    (line,) = [x for x in result.stderr.splitlines() if x.startswith("envport: ")]
    for part in said:
        assert part in line, line
    assert "state bridge" in line and "Traceback" not in result.stderr and not out.exists()


def test_a_spec_naming_the_wrong_agents_is_one_line(tmp_path: Path) -> None:
    spec = tmp_path / "spread"
    shutil.copytree(SPREAD, spec, ignore=shutil.ignore_patterns("ports", "__pycache__"))
    toml = spec / "envport.toml"
    text = toml.read_text()
    toml.write_text(
        text.replace("agents = ['agent_0', 'agent_1', 'agent_2']", "agents = ['a', 'b']")
    )
    with pytest.raises(SpecError, match=r"key `parallel.agents`: the reference's agents are"):
        Reference(load_spec(spec))
    result = run_envport("check", str(spec))
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert "key `parallel.agents`" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    toml.write_text(text + "\n[game]\nplayers = ['agent_0', 'agent_1']\nactions = 5\n")
    with pytest.raises(SpecError, match=r"give `\[game\]` \(turns\) or `\[parallel\]`"):
        load_spec(spec)


def test_agents_ending_apart_and_other_targets_are_one_line(tmp_path: Path) -> None:
    """What the kind does not cover yet is said, not compared wrongly: agents whose endings
    differ (simple_spread's never do, so the flags are handed to the adapter), and a
    translate to a target whose form with joint actions no check has verified (Rust)."""
    reference = Reference(load_spec(SPREAD))
    flags = {"agent_0": True, "agent_1": False, "agent_2": False}
    with pytest.raises(SpecError, match=r"key `parallel`: the reference's terminations differ"):
        reference.env._ended(flags, "terminations")
    result = run_envport("translate", str(SPREAD), "--target", "rust", "--out", str(tmp_path))
    assert result.returncode == 2, result.stdout + result.stderr
    assert "agents moving at once ([parallel]), ported to numpy or jax so far" in result.stderr
    assert "Traceback" not in result.stderr and not any(tmp_path.iterdir())


def test_mutant_edits_apply_exactly_once(tmp_path: Path) -> None:
    mutants = load_mutants(SPREAD)
    assert len({m.id for m in mutants}) == len(mutants) >= 6
    for mutant in mutants:
        port = apply_mutant(mutant, SPREAD / "ports" / mutant.target, tmp_path / mutant.id)
        assert mutant.new in (port / mutant.file).read_text()


@pytest.mark.slow
@pytest.mark.parametrize("target", ["numpy", "jax"])
def test_the_known_good_ports_verify(target: str) -> None:
    """The float32 JAX port, judged by the spec's bit-identical bounds, fails at once
    (p_pos within 1e-12); `[targets.jax.tolerance]` holds it to the float32 drift measured."""
    assert_known_good_parallel_port_verifies(SPREAD, target)


def test_bench_checks_the_jax_port_within_its_targets_tolerances() -> None:
    """bench steps each size once against the reference before timing it: the float32
    port's reward 1e-8 off is within the jax target's 1e-5, not the spec's 1e-12."""
    port = SPREAD / "ports" / "jax"
    quick = ["--batch-sizes", "8", "--steps", "20", "--repeats", "1", "--sync-envs", "2"]
    result = run_envport("bench", str(SPREAD), "--port", str(port), *quick)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "diverged" not in result.stdout and "jax port" in result.stdout


@pytest.mark.slow
@pytest.mark.parametrize(
    ("mutant_id", "levels", "named"),
    [
        ("numpy-joint-action-reversed", ("l1",), "agent_0.obs[0] (vel.x)"),
        # L3's huddling team (harness/policy.py) overlaps agents most steps.
        ("numpy-collision-once-per-pair", ("l3",), ".reward"),
        ("jax-damping-before-move", ("l1",), ".obs["),
    ],
)
def test_mutants_are_caught_by_agent_and_field(
    mutant_id: str, levels: tuple[str, ...], named: str, tmp_path: Path
) -> None:
    (mutant,) = [m for m in load_mutants(SPREAD) if m.id == mutant_id]
    port = apply_mutant(mutant, SPREAD / "ports" / mutant.target, tmp_path / mutant.id)
    options = VerifyOptions(
        target=mutant.target,
        levels=levels,
        shrink=False,
        examples=40,
        episodes=12,
        explore_steps=0,
        fail_fast=True,
    )
    report = verify(str(SPREAD), str(port), options)
    assert report.error is None and not report.passed, report.text()
    fields = divergent_fields(report)
    assert any(named in f and f.split(".")[0] in AGENTS for f in fields), fields


def test_joint_actions_are_drawn_and_played_in_each_agents_range() -> None:
    """L1/L2's draws and L3's policies over a joint action (a MultiDiscrete space): every
    agent's action in its own range, every value reached."""
    from hypothesis import given, settings

    from envport.verifiers.draws.policies import Planner
    from envport.verifiers.draws.strategies import action_strategy

    space = spaces.MultiDiscrete([5, 3])
    drawn: list[np.ndarray] = []

    @settings(max_examples=60, database=None, deadline=None)
    @given(action_strategy(space))
    def collect(action: np.ndarray) -> None:
        drawn.append(action)

    collect()
    played = list(Planner(0, ["uniform", "sticky", "biased"]).actions("biased", space, 1, 64))
    played += list(Planner(0).actions("uniform", space, 2, 64))
    for actions in (np.stack(drawn), np.stack(played)):
        assert actions.shape[1:] == (2,) and actions.dtype.kind == "i"
        assert set(actions[:, 0]) <= set(range(5)) and set(actions[:, 1]) <= set(range(3))
    assert set(np.stack(played)[:, 0]) == set(range(5))
