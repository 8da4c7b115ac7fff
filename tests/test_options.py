"""Translate's options: one model, filled from the command line and from BATCH.toml alike,
read back from run.json under the names used before, handed to a batch's runs as JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from envport.batch.child import order_json, read_order
from envport.batch.config import load_batch
from envport.cli import build_parser
from envport.pipeline.command import command_words, resume_options, translate_options
from envport.runs.options import Limits, OptimizeSettings, ResumeOptions, TranslateOptions
from envport.runs.state import RunState

from run_fixtures import fast_spec

SETTINGS = {
    "max_iterations": ("2", 2),
    "budget_usd": ("1.5", 1.5),
    "budget_tokens": ("90000", 90_000),
    "max_minutes": ("12.5", 12.5),
    "stuck_after": ("4", 4),
    "call_timeout": ("90.5", 90.5),
    "call_attempts": ("3", 3),
}


def test_the_command_line_and_a_batch_file_give_the_same_options(tmp_path: Path) -> None:
    spec = fast_spec(tmp_path / "spec") / "envport.toml"
    flags = [
        word
        for name, (text, _) in SETTINGS.items()
        for word in (f"--{name.replace('_', '-')}", text)
    ]
    keys = "".join(f"{name} = {value!r}\n" for name, (_, value) in SETTINGS.items())
    (tmp_path / "BATCH.toml").write_text(
        f'[[runs]]\nspec = "spec"\ntarget = "numpy"\nmodel = "openai:m"\n{keys}'
        "optimize = true\noptimize_rounds = 2\nbench_batch_sizes = [512, 8]\nbench_steps = 10\n"
    )
    plan = load_batch(tmp_path / "BATCH.toml")
    (planned,) = plan.runs
    args = build_parser().parse_args(
        ["translate", str(spec), "--target", "numpy", "--model", "openai:m", *flags,
         "--out", str(plan.out), "--run-id", planned.id,
         "--optimize", "--optimize-rounds", "2", "--bench-batch-sizes", "512,8",
         "--bench-steps", "10"]
    )  # fmt: skip
    from_cli = translate_options(args)
    assert from_cli == planned.options
    assert from_cli.limits.model_fields_set == set(SETTINGS)
    assert from_cli.optimize == OptimizeSettings(rounds=2, batch_sizes=[8, 512], steps=10)
    # Rendered back as the flags it came from (for a log), in the parser's order.
    assert command_words(from_cli)[-len(flags) :] == flags


def test_old_names_still_read() -> None:
    # run.json from before the names were unified.
    old = {"max_usd": 2.0, "max_tokens": 5000, "call_timeout_s": 30.0, "answer_tokens": 100}
    limits = Limits.model_validate(old)
    assert (limits.budget_usd, limits.budget_tokens, limits.call_timeout) == (2.0, 5000, 30.0)
    assert limits.answer_tokens == 100  # the per-call cap keeps a name of its own
    state = RunState.model_validate(
        {"run_id": "r", "spec_source": "s", "spec_name": "s", "target": "numpy", "model": "m",
         "limits": old}
    )  # fmt: skip
    assert json.loads(state.model_dump_json())["limits"]["budget_usd"] == 2.0


def test_a_batch_file_reads_run_usd_as_budget_usd(tmp_path: Path) -> None:
    fast_spec(tmp_path / "spec")
    (tmp_path / "BATCH.toml").write_text(
        'run_usd = 3.0\n[[runs]]\nspec = "spec"\ntarget = "numpy"\nmodel = "openai:m"\n'
        '[[runs]]\nname = "own"\nspec = "spec"\ntarget = "numpy"\nmodel = "openai:m"\n'
        "run_usd = 1.0\n"
    )
    assert [run.budget_usd for run in load_batch(tmp_path / "BATCH.toml").runs] == [3.0, 1.0]


def test_only_the_limits_given_travel_to_a_resume() -> None:
    args = build_parser().parse_args(["resume", "runs/x", "--max-minutes", "5"])
    options = resume_options(args)
    assert options.limits.given() == {"max_minutes": 5.0} and options.limits.gives_budget()
    handed = read_order(order_json(options))
    assert isinstance(handed, ResumeOptions) and handed.limits.given() == {"max_minutes": 5.0}
    # Given limits replace the run's own; the rest stay the run's.
    own = Limits(max_iterations=9, budget_usd=4.0)
    assert handed.limits.over(own) == Limits(max_iterations=9, budget_usd=4.0, max_minutes=5.0)
    assert command_words(handed) == ["resume", "runs/x", "--max-minutes", "5"]


def test_a_base_url_is_shown_only_when_asked() -> None:
    options = TranslateOptions(spec="s", target="numpy", base_url="https://u:p@host/v1")
    assert "--base-url" not in command_words(options)
    assert command_words(options, base_url=True)[-2:] == ["--base-url", "https://u:p@host/v1"]
    assert read_order(order_json(options)) == options


@pytest.mark.parametrize("flag", ["--optimize-rounds", "--bench-repeats"])
def test_optimise_settings_need_optimize(flag: str) -> None:
    from envport.errors import EnvportError

    args = build_parser().parse_args(["translate", "s", "--target", "numpy", flag, "2"])
    with pytest.raises(EnvportError, match=f"{flag} only apply with --optimize"):
        translate_options(args)


def test_l3_episodes_are_as_long_as_the_reference_allows(tmp_path: Path) -> None:
    """Without `levels.l3.steps`, L3 plays to the reference's time limit when it is longer
    than the default 500 steps (a registration's, or `max_episode_steps` in the kwargs)."""
    from envport.spec import load_spec
    from envport.verifiers.context import _episode_steps

    def steps(kwargs: str, levels: str = "") -> int:
        folder = tmp_path / f"spec{len(list(tmp_path.iterdir()))}"
        folder.mkdir()
        (folder / "envport.toml").write_text(
            f'name = "cp"\n[reference]\nentry = "gymnasium:CartPole-v1"\nkwargs = {{ {kwargs} }}\n'
            '[state]\nfields = { physics = "unwrapped.state" }\n' + levels
        )
        return _episode_steps(load_spec(folder))

    assert steps("") == 500
    assert steps("max_episode_steps = 1200") == 1200
    assert steps("max_episode_steps = 1200", "[levels.l3]\nsteps = 300\n") == 300
