"""Spec loading: a valid spec loads; every invalid one is a single line naming the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from envport.errors import SpecError
from envport.spec import load_spec

from helpers import CARTPOLE

MINIMAL = """
name = "t"
[reference]
entry = "gymnasium:CartPole-v1"
[state]
fields = { physics = "unwrapped.state" }
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "envport.toml"
    path.write_text(text)
    return path


def test_cartpole_spec_loads_with_its_values() -> None:
    spec = load_spec(CARTPOLE)
    assert spec.reference.entry == "gymnasium:CartPole-v1"
    assert spec.state.fields["elapsed_steps"] == "_elapsed_steps"
    assert [m.name for m in spec.targets["jax"].modules] == ["physics", "env"]
    assert spec.tolerance_for("obs.theta").bounds(free_running=True) == (1e-4, 1e-4)
    assert spec.tolerance_for("obs.theta").bounds(free_running=False) == (1e-5, 1e-5)
    assert spec.tolerance_for("reward").bounds(free_running=False) == (0.0, 0.0)


def test_defaults_fill_a_minimal_spec(tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path, MINIMAL))
    assert spec.levels.l3.episodes == 100
    assert spec.tolerance_for("obs[0]").bounds(free_running=False) == (1e-5, 1e-5)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        (MINIMAL.replace('name = "t"', ""), "key `name` is missing"),
        (MINIMAL + "[levels.l3]\nepisodes = -3\n", "key `levels.l3.episodes`"),
        (MINIMAL + "[levels.l3]\nepisdes = 3\n", "key `levels.l3.episdes` is not a spec key"),
        (MINIMAL.replace("gymnasium:CartPole-v1", "CartPole"), "key `reference.entry`"),
        (MINIMAL + "[targets.cuda]\n", "unknown target `cuda`"),
        (MINIMAL + "[tolerance]\nobs = { atol = -1 }\n", "key `tolerance.obs.atol`"),
        (MINIMAL.replace("unwrapped.state", "unwrapped..state"), "key `state.fields`"),
        ("name = [", "not valid TOML"),
    ],
)
def test_bad_specs_are_one_line_naming_the_key(tmp_path: Path, text: str, fragment: str) -> None:
    with pytest.raises(SpecError) as caught:
        load_spec(write(tmp_path, text))
    message = str(caught.value)
    assert fragment in message
    assert "\n" not in message
    assert caught.value.exit_code == 2


def test_missing_spec_file_says_what_to_pass(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="no such spec file"):
        load_spec(tmp_path / "nowhere")


def test_the_spec_knows_the_registrys_targets() -> None:
    from envport.spec import TARGETS
    from envport.targets.registry import TARGET_NAMES

    assert TARGETS == TARGET_NAMES
