"""`reference.data` and `reference.cut` (docs/spec.md): the prompts carry a package's data
file beside its sources and leave out what the spec cuts however the code reaches it;
a data file or cut name that is not there is one line and exit 2, before anything runs.
Crafter's spec uses both: data.yaml holds its tables, and its step draws pixels it need not.
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
