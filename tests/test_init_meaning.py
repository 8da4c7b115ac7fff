"""`envport init` writes what a state field's values mean where the reference's own source
says so (a comment on the attribute's assignment, the docstring's observation table, a
Discrete observation's codes), with where it read it, and nothing where the source is
silent. Run through the real command line on an env written into the test's directory."""

from __future__ import annotations

import tomllib
from pathlib import Path

from helpers import run_envport, user_env

# A small Gymnasium env: the room's temperature carries its meaning in a comment; the drift
# has only code commented out above it, which is no meaning.
ENV = '''
import gymnasium as gym
import numpy as np
from gymnasium.wrappers import TimeLimit


class Thermostat(gym.Env):
    """A room warmed one degree a step while the heater runs, cooled one otherwise."""

    def __init__(self):
        self.action_space = gym.spaces.Discrete(2)
        self.observation_space = gym.spaces.Box(0, 40, (2,), np.int64)
        self.temperature = 20  # the room's temperature in whole degrees Celsius
        # self.drift = 1
        self.drift = 0

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.temperature = 20 + int(self.np_random.integers(-2, 3))
        self.drift = 0
        return np.array([self.temperature, self.drift]), {}

    def step(self, action):
        self.drift = (self.drift + 1) % 3
        self.temperature = self.temperature + (1 if action else -1) + (self.drift == 2)
        done = not 10 <= self.temperature <= 30
        return np.array([self.temperature, self.drift]), 1.0, done, False, {}


def make():
    return TimeLimit(Thermostat(), 40)
'''
SAID = "the room's temperature in whole degrees Celsius"


def _init(tmp_path: Path, source: str) -> str:
    (tmp_path / "thermostat.py").write_text(source)
    out = tmp_path / "spec"
    done = run_envport(
        "init", "thermostat:make", "--out", str(out), "--budget", "20,2000",
        cwd=tmp_path, env=user_env(),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return (out / "envport.toml").read_text()


def _prose(text: str) -> str:
    """The spec's comments as one paragraph (they are wrapped at 92 columns)."""
    return " ".join(line[2:] for line in text.splitlines() if line.startswith("# "))


def test_init_describes_a_field_from_the_comment_on_its_assignment(tmp_path: Path) -> None:
    text = _init(tmp_path, ENV)
    describe = tomllib.loads(text)["state"]["describe"]
    assert describe == {"temperature": SAID}, text
    # Where it was read, in the spec's own comment; the silent fields named for the user.
    prose = _prose(text)
    assert "the comment on `self.temperature = ...` in Thermostat (thermostat.py, line 13)" in prose
    assert "says what `elapsed_steps`, `drift` hold" in prose


def test_init_writes_no_description_where_the_source_is_silent(tmp_path: Path) -> None:
    text = _init(tmp_path, ENV.replace(f"  # {SAID}", ""))
    assert "describe" not in tomllib.loads(text)["state"], text
    assert "says what `elapsed_steps`, `temperature`, `drift` hold" in _prose(text)
