"""The prompt templates: what each prompt must carry, overrides, and template errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from envport.errors import EnvportError
from envport.pipeline.prompting import PromptBuilder, target_info
from envport.pipeline.sources.reading import read_sources
from envport.prompts.render import TEMPLATES, Prompts
from envport.runs.state import CheckOutcome, RunState
from envport.spec import load_spec

from helpers import CARTPOLE


def builder(target: str = "jax", directory: Path | None = None) -> PromptBuilder:
    spec = load_spec(CARTPOLE)
    return PromptBuilder(Prompts(directory), spec, read_sources(spec), target_info(target))


def state(target: str = "jax", **changes: object) -> RunState:
    spec = load_spec(CARTPOLE)
    base = RunState(
        run_id="r",
        spec_source="s",
        spec_name="cartpole",
        target=target,  # type: ignore[arg-type]
        model="replay:x",
        modules=spec.target(target).modules,
        entry=spec.target(target).entry,
    )
    return base.model_copy(update=changes)


FAILURE = CheckOutcome(
    name="l3.free",
    scope="composed",
    level="l3",
    passed=False,
    failures=["L3 free, episode 2, step 8\n  truncated: expected True, got False"],
    signature="l3.free|ep2/st8|truncated",
)


def test_every_shipped_template_exists() -> None:
    prompts = Prompts()
    for name in TEMPLATES:
        assert prompts.env.get_template(name) is not None


def test_context_carries_reference_source_and_contract_and_no_answer_format() -> None:
    text = builder("numpy").context(state("numpy"))
    source = read_sources(load_spec(CARTPOLE))[0]
    assert f"`{source.module}` (cut to what a port needs; left out:" in text
    assert "theta_threshold_radians = 12 * 2 * math.pi / 360" in text  # verbatim reference
    assert "class VectorEnv(num_envs: int)" in text  # the backend's contract
    assert "`physics.py`: exports `dynamics`, `is_terminated`" in text
    assert "`elapsed_steps` = `env._elapsed_steps`" in text
    # The answer format is the task's: the stable prefix holds none (one format per prompt).
    assert "### File:" not in text


def test_context_states_the_spaces_measured_on_the_reference() -> None:
    from envport.pipeline.observed import observe

    spec = load_spec(CARTPOLE)
    measured = observe(spec)
    prompts = PromptBuilder(Prompts(None), spec, read_sources(spec), target_info("numpy"))
    prompts.observed = measured
    text = prompts.context(state("numpy"))
    assert "Spaces: actions `Discrete(2)`; observations `Box(" in text


def test_action_meanings_come_from_the_reference_where_it_defines_them() -> None:
    import enum

    import gymnasium as gym

    from envport.pipeline.observed import action_meanings

    class Named(gym.Env):
        action_space = gym.spaces.Discrete(3)

        def get_action_meanings(self) -> list[str]:
            return ["NOOP", "LEFT", "RIGHT"]

    class Mapped(gym.Env):
        action_space = gym.spaces.Discrete(2)
        action_set = ("n", "f")  # a wrapper's minimal action set: index -> game action

    class Actions(enum.IntEnum):
        left = 0
        forward = 1

    class Enumerated(gym.Env):
        action_space = gym.spaces.Discrete(2)
        actions = Actions  # MiniGrid's way: `self.actions.forward` in its step

    assert action_meanings(Named()) == ["NOOP", "LEFT", "RIGHT"]
    assert action_meanings(Enumerated()) == ["0 = actions.left", "1 = actions.forward"]
    assert action_meanings(Mapped()) == ["action_set[0] = 'n'", "action_set[1] = 'f'"]
    assert action_meanings(gym.make("CartPole-v1")) is None


def test_every_task_ends_with_its_answer_format() -> None:
    text, _ = builder().generate(state(), {})
    assert text.rstrip().endswith("Text outside the blocks is kept in the transcript.")
    assert "### File: physics.py" in text
    repair = builder().repair(state(open_failures=[FAILURE]), {})
    assert "## How to answer" in repair and "### File: physics.py" in repair


def test_target_constraints_differ_per_backend() -> None:
    jax_text = builder("jax").context(state("jax"))
    numpy_text = builder("numpy").context(state("numpy"))
    assert "jax.jit" in jax_text and "jax.jit" not in numpy_text
    assert "leading batch dimension" in numpy_text


def test_generate_names_the_module_its_exports_and_shows_earlier_modules() -> None:
    text, required = builder().generate(
        state(module_index=1), {"physics.py": "G = 9.8\n", "other.py": "Z = 0\n"}
    )
    assert required == ["env.py"]
    assert "write module `env.py` (2 of 2)" in text
    assert "`step`" in text and "entry module" in text
    assert "G = 9.8" in text and "Z = 0" not in text


def test_repair_carries_divergence_iteration_notes_and_the_files() -> None:
    run = state(
        phase="composed",
        iteration=3,
        open_failures=[FAILURE],
        notes=["Your edit in iteration 2 was reverted because it made l3.resync fail"],
    )
    text = builder().repair(run, {"env.py": "T = 1\n", "physics.py": "G = 9.8\n"})
    assert "Repair iteration 3" in text
    assert "truncated: expected True, got False" in text
    assert "iteration 2 was reverted" in text
    assert "Find the root cause first" in text
    assert "propose one targeted test" in text
    assert "T = 1" in text and "G = 9.8" in text
    assert "has not moved" not in text


def test_repair_prompts_of_two_iterations_differ() -> None:
    # The response cache ignores the purpose: identical prompts would get the same answer.
    files = {"env.py": "T = 1\n"}
    first = builder().repair(state(phase="composed", iteration=1, open_failures=[FAILURE]), files)
    second = builder().repair(state(phase="composed", iteration=2, open_failures=[FAILURE]), files)
    assert first != second


def test_stuck_repair_adds_history_and_the_whole_port() -> None:
    run = state(module_index=0, iteration=3, open_failures=[FAILURE], history=["iteration 1: x"])
    files = {"physics.py": "G = 1\n", "env.py": "E = 1\n"}
    plain = builder().repair(run, files)
    assert "E = 1" not in plain  # a module repair shows the module and what it imports
    run.stuck.context_added = True
    run.stuck.count = 3
    stuck = builder().repair(run, files)
    assert "reported 3 times in a row" in stuck
    assert "iteration 1: x" in stuck
    assert "E = 1" in stuck


def test_reask_quotes_the_parse_error() -> None:
    text = builder().reask("the block for `env.py` is not closed", True, ["env.py"], False)
    assert "the block for `env.py` is not closed" in text
    assert "cut off at the token limit" in text
    assert "`env.py`" in text


def test_plan_lists_the_backend_contract() -> None:
    text = builder("numpy").plan(state("numpy"))
    assert "`VectorEnv`, `state_from_reference`" in text
    assert "```toml" in text


def test_override_directory_replaces_one_template_and_keeps_the_rest(tmp_path: Path) -> None:
    (tmp_path / "repair.j2").write_text("CUSTOM REPAIR {{ iteration }}\n")
    custom = builder(directory=tmp_path)
    assert custom.repair(state(iteration=5, open_failures=[FAILURE]), {}) == "CUSTOM REPAIR 5\n"
    assert "Port `cartpole`" in custom.context(state())  # not overridden: the shipped one
    assert custom.prompts.origin("repair.j2") == str(tmp_path / "repair.j2")


def test_template_errors_are_one_line(tmp_path: Path) -> None:
    (tmp_path / "repair.j2").write_text("{{ no_such_name }}\n")
    with pytest.raises(EnvportError, match=r"prompt template repair.j2.*no_such_name"):
        builder(directory=tmp_path).repair(state(open_failures=[FAILURE]), {})
    with pytest.raises(EnvportError, match="no such directory"):
        Prompts(tmp_path / "missing")
