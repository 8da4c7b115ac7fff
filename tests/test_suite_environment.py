"""The tests see the machine a user sees: every process they start gets a user's shell
environment, never a copy of the test process's own (which its imports change)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import ROOT, user_env

STARTERS = {"run", "Popen", "check_output", "call", "check_call"}


def test_every_process_a_test_starts_is_given_a_users_environment() -> None:
    """A subprocess started without `env=` inherits whatever this process's imports set
    (envpool sets MPLCONFIGDIR on import): a test would pass on a machine no user has."""
    bare = []
    for path in sorted((ROOT / "tests").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "subprocess"
                and node.func.attr in STARTERS
                and not any(keyword.arg == "env" for keyword in node.keywords)
            ):
                bare.append(f"{path.name}:{node.lineno}")
    assert not bare, f"subprocess started without env= (use helpers.user_env()): {bare}"


def test_a_variable_this_process_set_does_not_reach_a_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MPLCONFIGDIR", "/somewhere/only/pytest/has")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-not-for-commands")
    monkeypatch.setenv("ENVPORT_CACHE_DIR", "/a/cache/of/the/tests/own")
    env = user_env()
    assert "MPLCONFIGDIR" not in env and "ANTHROPIC_API_KEY" not in env
    # envport's own settings, set by a test on purpose, are what the command must use.
    assert env["ENVPORT_CACHE_DIR"] == "/a/cache/of/the/tests/own"
    # What a user's shell has is there, and the project's virtualenv comes first on PATH.
    assert env["PATH"].split(os.pathsep)[0] == str(Path(sys.executable).parent)
    seen = subprocess.run(
        [sys.executable, "-c", "import os; print(sorted(os.environ))"],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    ).stdout
    assert "MPLCONFIGDIR" not in seen and "ANTHROPIC_API_KEY" not in seen
    assert "'PATH'" in seen
