"""`reference.data` and `reference.cut` (docs/spec.md): the prompts carry a package's data
file beside its sources and leave out what the spec cuts however the code reaches it;
a data file or cut name that is not there is one line and exit 2, before anything runs.
Crafter's spec uses both: data.yaml holds its tables, and its step draws pixels it need not.
A module's `shows` brings cut definitions back into that module's own requests only
(Crafter's pixels module is shown the renderer and its textures' file names).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import ROOT, prompt_context, user_env

CRAFTER = ROOT / "examples" / "crafter"


def test_the_prompt_carries_crafter_data_file_and_leaves_out_what_the_spec_cuts() -> None:
    import crafter

    text = prompt_context(CRAFTER, "numpy")
    data = (Path(crafter.__file__).parent / "data.yaml").read_text().strip()
    assert "### `crafter/data.yaml`" in text and f"````yaml\n{data}\n" in text
    # The tables' loader is shown (a loop storing into globals()), so the data has a meaning.
    assert "globals()[key] = value" in text
    # The renderer and what only it draws with are cut, and the prompt says the spec cut them.
    assert "`Env.render` (named in the spec's reference.cut: not part of the port)" in text
    assert "def render(" not in text and "class LocalView" not in text
    assert "class Textures" not in text and "class ItemView" not in text
    # What Python calls for the code is kept: `world[pos]` and the semantic view's call.
    assert "def __getitem__(self, pos):" in text and "def __call__(self):" in text
    # The generator and its noise: OpenSimplex's 3D gradients through `from .constants import *`.
    assert "def generate_world(world, player):" in text and "GRADIENTS3 = np.array([" in text
    assert "GRADIENTS4 = np.array" not in text


def _generate_prompts(target: str) -> dict[str, str]:
    """Each module's generate request (the part after the shared context), no files yet."""
    from envport.pipeline.prompting import PromptBuilder, target_info
    from envport.pipeline.sources.reading import read_sources
    from envport.prompts.render import Prompts
    from envport.runs.state import RunState
    from envport.spec import load_spec

    spec = load_spec(CRAFTER)
    builder = PromptBuilder(Prompts(), spec, read_sources(spec), target_info(target))
    modules = spec.target(target).modules
    state = RunState(
        run_id="r", spec_source="s", spec_name=spec.name, target=target,
        model="replay:x", modules=modules, entry="env",
    )  # fmt: skip
    return {
        m.name: builder.generate(state.model_copy(update={"module_index": i}), {})[0]
        for i, m in enumerate(modules)
    }


@pytest.mark.parametrize("target", ["numpy", "jax"])
def test_a_module_is_shown_the_cut_definitions_its_spec_names(target: str) -> None:
    # Crafter's pixels module names the renderer the spec cuts (`shows`): its request quotes
    # them and lists the textures' files; the env module's, like the shared context, does not.
    prompts = _generate_prompts(target)
    pixels, env = prompts["pixels"], prompts["env"]
    for code in ("class LocalView:", "class Textures:", "class ItemView:", "def _draw_alpha("):
        assert code in pixels and code not in env, code
    assert "def render(self, size=None):" in pixels and "def render(" not in env
    assert "zombie.png" in pixels and "player-sleep.png" in pixels and ".png" not in env
    assert sum("class LocalView:" in text for text in prompts.values()) == 1


def test_a_shown_name_that_is_no_definition_stops_with_one_line() -> None:
    from envport.errors import SpecError
    from envport.pipeline.sources.reading import read_sources
    from envport.pipeline.sources.shown import shown_sources
    from envport.spec import load_spec

    sources = read_sources(load_spec(CRAFTER))
    for name, said in (
        ("crafter.engine.NoSuchView", "'crafter.engine.NoSuchView' is no definition"),
        ("crafter/no_such_folder", "'crafter/no_such_folder' names no folder"),
    ):
        with pytest.raises(SpecError, match=said):
            shown_sources(sources, [name], "targets.numpy.modules.pixels.shows")


def envport(*words: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "envport", *words],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env=user_env(),
    )


@pytest.mark.parametrize(
    "key, value, said",
    [
        (
            "data",
            '["gymnasium/no_such_table.yaml"]',
            "reference.data: 'gymnasium/no_such_table.yaml' cannot be read at ",
        ),
        ("data", '["no_such_package/table.yaml"]', "names no installed package's file"),
        (
            "cut",
            '["gymnasium.envs.classic_control.cartpole.CartPoleEnv.paint"]',
            "reference.cut: 'gymnasium.envs.classic_control.cartpole.CartPoleEnv.paint' names no",
        ),
    ],
)
def test_a_data_file_or_cut_name_not_there_is_one_line_and_exit_2(
    key: str, value: str, said: str, tmp_path: Path
) -> None:
    copy = tmp_path / "cartpole"
    shutil.copytree(ROOT / "examples" / "cartpole", copy, ignore=shutil.ignore_patterns("ports"))
    spec = copy / "envport.toml"
    text = spec.read_text()
    sources = 'sources = ["gymnasium.envs.classic_control.cartpole"]'
    assert sources in text
    spec.write_text(text.replace(sources, f"{sources}\n{key} = {value}"))
    result = envport("check", str(spec))
    assert result.returncode == 2, result.stdout + result.stderr
    lines = [line for line in result.stderr.splitlines() if said in line]
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr


def test_a_modules_repair_is_shown_what_its_generate_request_was() -> None:
    from envport.pipeline.prompting import PromptBuilder, target_info
    from envport.pipeline.sources.reading import read_sources
    from envport.prompts.render import Prompts
    from envport.runs.state import RunState
    from envport.spec import load_spec

    spec = load_spec(CRAFTER)
    builder = PromptBuilder(Prompts(), spec, read_sources(spec), target_info("numpy"))
    modules = spec.target("numpy").modules
    repairs = {}
    for scope in ("pixels", "env"):
        state = RunState(
            run_id="r", spec_source="s", spec_name=spec.name, target="numpy",
            model="replay:x", modules=modules, entry="env", phase="modules",
            module_index=[m.name for m in modules].index(scope),
        )  # fmt: skip
        repairs[scope] = builder.repair(state, {})
    assert "class LocalView:" in repairs["pixels"] and "zombie.png" in repairs["pixels"]
    assert "class LocalView:" not in repairs["env"]
