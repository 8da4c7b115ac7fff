"""The worker's boundary built from what the driver knows (issue 27): what it can see comes
from the driver's own installation and the fields it set, never from text a model wrote."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from envport.errors import PortError
from envport.serve import jail
from envport.serve.client import PortWorker
from envport.serve.ops import LoadReference
from envport.spec import load_spec
from envport.targets.registry import load_request

from helpers import CARTPOLE

pytestmark = pytest.mark.skipif(not jail.available(), reason="bubblewrap cannot run here")

SECRET = "sk-isolation-planted-7731"


def _leak_probe(targets: list[str]) -> str:
    """Port code that, at import, reads every target it can and fails naming what it read."""
    return (
        "\n\nimport os as _os\n"
        f"_read = []\nfor _t in {targets!r}:\n"
        "    try:\n"
        "        if _os.path.isdir(_t):\n"
        "            _read.append((_t, sorted(_os.listdir(_t))))\n"
        "        else:\n"
        "            _read.append((_t, open(_t).read()))\n"
        "    except OSError:\n"
        "        pass\n"
        "raise RuntimeError(f'seen: {_read}')\n"
    )


def test_paths_planted_in_model_written_fields_are_never_mounted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The user's working directory holds a key; the driver runs from it.
    user_dir = tmp_path / "project"
    user_dir.mkdir()
    (user_dir / ".env").write_text(f"OPENAI_API_KEY={SECRET}\n")
    monkeypatch.chdir(user_dir)
    planted = [str(user_dir), str(user_dir / ".env"), "/proc/self/cwd", "/proc/self/cwd/.env"]
    planted += ["/etc/shadow", "/etc/sudoers", str(Path.home() / ".bash_history")]
    # A spec whose model-written text (description, a module's contract) names those paths.
    spec_dir = tmp_path / "cartpole"
    shutil.copytree(CARTPOLE, spec_dir, ignore=shutil.ignore_patterns("__pycache__"))
    spec_file = spec_dir / "envport.toml"
    text = spec_file.read_text().replace(
        'description = "', f"description = {json.dumps(' '.join(planted))[:-1]} "
    )
    spec_file.write_text(text)
    port = spec_dir / "ports" / "numpy"
    (port / "env.py").write_text((port / "env.py").read_text() + _leak_probe(planted))
    load = load_request(load_spec(spec_file), port, "numpy")
    # ...and a plan's contract text, and names in the module list (what a model plans).
    modules = [
        {**m, "contract": {e: f"reads {p}" for e, p in zip(m["exports"], planted, strict=False)}}
        for m in load.modules
    ]
    modules.append({"name": "/proc/self/cwd", "exports": planted, "contract": {}})
    load = dataclasses.replace(load, modules=modules)
    # The command line mounts none of them.
    line = jail.command_line(["true"], tmp_path / "scratch", readable=[port])
    for path in (str(user_dir), "/etc/shadow", "/root"):
        assert path not in line
    assert "/etc" not in [line[i + 1] for i, a in enumerate(line) if a == "--ro-bind"]
    with PortWorker(timeout=120, load=load) as worker, pytest.raises(PortError) as failed:
        worker.receive()
    message = str(failed.value)
    assert "seen: [" in message, message
    assert SECRET not in message
    for path in planted:
        if path == "/proc/self/cwd":
            continue  # the worker's own working directory: its scratch
        assert f"('{path}'," not in message, message
    # A reference worker given the same spec sees the spec's folder, and still nothing else.
    with PortWorker(timeout=120, load=LoadReference(spec=str(spec_file))) as worker:
        assert "sandbox" in worker.receive()
