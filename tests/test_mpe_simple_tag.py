"""Agents observing different lengths: mpe2's simple_tag (examples/mpe_simple_tag), whose
three adversaries observe 16 components and whose runner observes 14.

The stacked observation pads the runner's row to 16 (`[parallel] observation_sizes`), the
padding never compared; a divergence in the runner's shorter row names the runner and the
field; a spec whose declared lengths the reference contradicts (or that declares none) is
one line with exit 2; and (slow) the known-good NumPy and JAX ports verify and mutants are
caught by agent and field.
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

from helpers import (
    ROOT,
    assert_known_good_parallel_port_verifies,
    divergent_fields,
    run_envport,
    user_env,
)

pytest.importorskip("mpe2")

TAG = ROOT / "examples" / "mpe_simple_tag"
AGENTS = ["adversary_0", "adversary_1", "adversary_2", "agent_0"]
SIZES = "observation_sizes = [16, 16, 16, 14]"


def _copy(tmp_path: Path) -> Path:
    spec = tmp_path / "tag"
    shutil.copytree(TAG, spec, ignore=shutil.ignore_patterns("ports", "__pycache__"))
    return spec


def test_the_runners_shorter_row_is_padded_with_zeros() -> None:
    reference = Reference(load_spec(TAG))
    assert reference.action_space == spaces.MultiDiscrete([5, 5, 5, 5])
    start = reference.reset(0)
    assert start.shape == (4, 16) and start.dtype == np.float32
    state = reference.read_state()
    # The runner's row: its own view (adversary_2 relative to it last), then zeros.
    assert np.allclose(start[3, 12:14], state["p_pos.adversary_2"] - state["p_pos.agent_0"])
    assert (start[3, 14:] == 0).all()
    # An adversary's last two are the runner's velocity (zero at a reset).
    assert (start[0, 14:] == 0).all()
    moved = reference.step(np.asarray([0, 0, 0, 2]))  # the runner pushes +x (accel 4)
    assert moved.obs[3, 0] == np.float32(0.4) and moved.obs[0, 14] == np.float32(0.4)
    assert (moved.obs[3, 14:] == 0).all()


def test_a_divergence_in_the_runners_row_is_named_and_its_padding_never_compared() -> None:
    """A port is free in the padding (neither side computes it): garbage there is no
    divergence, while one component of the runner's own 14 is, by agent and field."""
    spec = load_spec(TAG)
    want = Reference(spec).reset(0)
    got = want.copy()
    got[3, 14:] = 7.0  # the runner's padding
    got[3, 13] += 0.5  # the runner's view of adversary_2, y
    rewards = np.zeros((1, 4))
    expected = Steps(want[None], rewards, np.zeros(1, bool), np.zeros(1, bool))
    actual = Steps(got[None], rewards.copy(), np.zeros(1, bool), np.zeros(1, bool))
    ((_, diffs),) = divergent_steps(spec, expected, actual, False, np.asarray([0]))
    assert [d.field for d in diffs] == ["agent_0.obs[13] (adversary_2.y rel)"]
    assert diffs[0].atol == 1e-6  # the agent's field takes `obs`'s tolerance
    got[3, 13] = want[3, 13]
    actual = Steps(got[None], rewards.copy(), np.zeros(1, bool), np.zeros(1, bool))
    assert divergent_steps(spec, expected, actual, False, np.asarray([0])) == []


def test_the_prompt_states_the_agents_order_and_where_the_runners_row_is_padded() -> None:
    """The layout is the port's contract, not the reference's (mpe2 answers a dict of
    agents): a prompt without it leaves the model to guess the rows' order and which end of
    the runner's row is padding, and a guess that pads in front shifts every component."""
    from envport.pipeline.prompting import PromptBuilder, target_info
    from envport.prompts.render import Prompts
    from envport.runs.state import RunState

    spec = load_spec(TAG)
    builder = PromptBuilder(Prompts(), spec, [], target_info("jax"))
    modules = spec.target("jax").modules
    state = RunState(
        run_id="r",
        spec_source="s",
        spec_name=spec.name,
        target="jax",
        model="replay:x",
        modules=modules,
        entry="env",
    )
    text = builder.context(state)
    assert "(`possible_agents`): adversary_0, adversary_1, adversary_2, agent_0." in text
    assert "adversary_2 16, agent_0 14. The stacked observation is [4, 16]" in text
    assert "its own components first, at 0 up to its length, padded with zeros after" in text
    names = spec.parallel.observation_names["agent_0"] if spec.parallel else []
    assert f"- agent_0: {', '.join(names)}\n" in text


@pytest.mark.parametrize(
    ("old", "new", "said"),
    [
        # The reference made with a third obstacle: every observation 2 longer than declared.
        (
            "num_obstacles = 2",
            "num_obstacles = 3",
            "key `parallel.observation_sizes`: adversary_0's observation is [18] in the "
            "reference, the spec says [16]",
        ),
        (SIZES, "", "declare each length in `[parallel]`: observation_sizes = [16, 16, 16, 14]"),
        (SIZES, "observation_sizes = [16, 16, 14]", "3 lengths for 4 agents"),
    ],
)
def test_observation_sizes_the_reference_contradicts_are_one_line(
    old: str, new: str, said: str, tmp_path: Path
) -> None:
    spec = _copy(tmp_path)
    toml = spec / "envport.toml"
    toml.write_text(toml.read_text().replace(old, new))
    result = run_envport("check", str(spec), env=user_env())
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert said in result.stderr


def test_per_agent_names_of_the_wrong_length_are_one_line(tmp_path: Path) -> None:
    spec = _copy(tmp_path)
    toml = spec / "envport.toml"
    toml.write_text(toml.read_text().replace("'adversary_2.x rel', 'adversary_2.y rel']", "]"))
    with pytest.raises(SpecError, match=r"`observation_names.agent_0`: 12 names for"):
        load_spec(spec)


@pytest.mark.slow
@pytest.mark.parametrize("target", ["numpy", "jax"])
def test_the_known_good_ports_verify(target: str) -> None:
    """The float32 JAX port is held to `[targets.jax.tolerance]`, the drift measured."""
    assert_known_good_parallel_port_verifies(TAG, target)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("mutant_id", "named"),
    [
        ("numpy-runner-velocity-own", "adversary_0.obs[14] (agent_0.vel.x)"),
        ("numpy-capture-own-only", ".reward"),
        # The padding's place is the port's to keep: the runner's row shifted by it.
        ("jax-runner-padded-in-front", "agent_0.obs["),
    ],
)
def test_mutants_are_caught_by_agent_and_field(mutant_id: str, named: str, tmp_path: Path) -> None:
    (mutant,) = [m for m in load_mutants(TAG) if m.id == mutant_id]
    port = apply_mutant(mutant, TAG / "ports" / mutant.target, tmp_path / mutant.id)
    options = VerifyOptions(
        target=mutant.target,
        levels=("l1",),
        shrink=False,
        examples=40,
        episodes=12,
        explore_steps=0,
        fail_fast=True,
    )
    report = verify(str(TAG), str(port), options)
    assert report.error is None and not report.passed, report.text()
    fields = divergent_fields(report)
    assert any(named in f and f.split(".")[0] in AGENTS for f in fields), fields


@pytest.mark.slow
def test_an_autoreset_that_keeps_the_last_rewards_is_held_by_l2_vector(tmp_path: Path) -> None:
    # The step after an env's episode ends resets it with reward 0 for every agent
    # (Gymnasium's next-step autoreset); this port hands back the rewards of the world it
    # stepped before resetting. Only l2.vector steps a VectorEnv past an episode's end.
    port = tmp_path / "numpy"
    shutil.copytree(TAG / "ports" / "numpy", port, ignore=shutil.ignore_patterns("__pycache__"))
    env = port / "env.py"
    source = env.read_text()
    assert source.count("            reward[done_before] = 0.0\n") == 1
    env.write_text(source.replace("            reward[done_before] = 0.0\n", ""))
    options = VerifyOptions(target="numpy", levels=("l2",), shrink=False, examples=10)
    report = verify(str(TAG), str(port), options)
    failed = {f"{level.level}.{level.mode}" for level in report.levels if not level.passed}
    assert failed == {"l2.vector"}, report.text()
    assert "reward" in report.text()


@pytest.mark.slow
def test_what_a_port_leaves_in_the_padding_is_never_compared_by_l2_vector(
    tmp_path: Path,
) -> None:
    # The runner's last two components are padding: neither side computes them. This port
    # leaves fresh noise there at every call, so whole-row comparisons (a partial reset's
    # untouched envs, a seeded reset done twice) would see it; l2.reset and l2.vector must
    # not. (l2.state_api, run in the worker, still does: left, see the closing note.)
    port = tmp_path / "numpy"
    shutil.copytree(TAG / "ports" / "numpy", port, ignore=shutil.ignore_patterns("__pycache__"))
    env = port / "env.py"
    source = env.read_text()
    plain = "        return observations(self.pos, self.vel, self.obstacles)\n"
    assert source.count(plain) == 1
    noisy = (
        "        obs = observations(self.pos, self.vel, self.obstacles)\n"
        "        obs[:, -1, 14:] = np.random.default_rng().normal(size=(len(obs), 2))\n"
        "        return obs\n"
    )
    env.write_text(source.replace(plain, noisy))
    options = VerifyOptions(target="numpy", levels=("l2",), shrink=False, examples=10)
    report = verify(str(TAG), str(port), options)
    passed = {f"{level.level}.{level.mode}" for level in report.levels if level.passed}
    assert {"l2.reset", "l2.vector"} <= passed, report.text()
