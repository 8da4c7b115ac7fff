"""Reverse injection: ports that cannot load a state (envpool) verify from their own starts.

The port resets itself, its start state (its getter, or the observation the spec declares
the state) is written into the reference, and both play the same actions.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from envport.errors import EnvportError
from envport.serve.client import PortWorker
from envport.spec import load_spec
from envport.targets.reference import Reference
from envport.targets.registry import TargetChoice
from envport.verifiers.levels import reverse
from envport.verifiers.options import L3Options
from envport.verifiers.reporting.replay import replays
from envport.verifiers.verify import VerifyOptions, verify

from helpers import CARTPOLE, ROOT, run_envport

pytest.importorskip("envpool")
MOUNTAINCAR = ROOT / "examples" / "mountaincar"
BRIDGES = {"cartpole": CARTPOLE, "mountaincar": MOUNTAINCAR}


def _verify(spec: Path, port: Path, *extra: str, json_out: Path | None = None):
    args = ["verify", str(spec), "--port", str(port), "--reverse-injection", "--episodes", "40"]
    if json_out is not None:
        args += ["--json", str(json_out)]
    return run_envport(*args, *extra)


@pytest.mark.parametrize("example", sorted(BRIDGES))
def test_envpool_verifies_by_reverse_injection(example: str, tmp_path: Path) -> None:
    spec = BRIDGES[example]
    done = _verify(spec, spec / "ports" / "envpool", json_out=tmp_path / "report.json")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((tmp_path / "report.json").read_text())
    ran = {f"{level['level']}.{level['mode']}": level for level in report["levels"]}
    # CartPole's episodes all terminate early: the reference's look-ahead plays some to the
    # time limit too (`@limit`); MountainCar's reach it on their own.
    limit = ["reverse.free@limit", "reverse.resync@limit"] if example == "cartpole" else []
    assert sorted(ran) == sorted(["reverse.free", "reverse.resync", *limit])
    assert all(level["passed"] and level["steps_compared"] > 40 for level in ran.values())
    # The report says what could not run on a port without a state setter, and why.
    assert {"l1", "l2", "l3.late_start"} <= set(report["not_run"])
    assert "start states from its observation" in done.stdout
    assert "n/a  l1: not run" in done.stdout


@pytest.mark.parametrize(("example", "planted"), [("cartpole", "0.5"), ("mountaincar", "-0.5")])
def test_envpool_bridge_with_one_reward_changed_fails(
    example: str, planted: str, tmp_path: Path
) -> None:
    spec = BRIDGES[example]
    port = tmp_path / "envpool"
    shutil.copytree(spec / "ports" / "envpool", port, ignore=shutil.ignore_patterns("__pycache__"))
    env = port / "env.py"
    source = env.read_text()
    fault = (
        "    def step(self, actions):\n"
        "        out = list(self._env.step(np.asarray(actions, dtype=np.int32)))\n"
        "        self._calls = getattr(self, '_calls', 0) + 1\n"
        "        if self._calls == 5:  # planted: env 0's fifth reward, and no other\n"
        "            out[1] = out[1].copy()\n"
        f"            out[1][0] = {planted}\n"
        "        return tuple(out)\n"
    )
    start = source.index("    def step(self, actions):")
    env.write_text(source[:start] + fault)
    done = _verify(spec, port, json_out=tmp_path / "report.json")
    assert done.returncode == 1, done.stdout + done.stderr
    report = json.loads((tmp_path / "report.json").read_text())
    # (The fault fires once: the episodes played to the time limit after it do not see it.)
    for level in [lv for lv in report["levels"] if not lv["mode"].endswith("@limit")]:
        assert not level["passed"] and level["diverged_episodes"] == 1
        first = level["divergences"][0]
        assert (first["episode"], first["step"]) == (0, 4)
        assert [f["field"] for f in first["fields"]] == ["reward"]
        assert first["fields"][0]["actual"] == float(planted)
    assert "--reverse-injection" in report["levels"][0]["divergences"][0]["replay"]


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_known_good_ports_verify_through_their_getter(backend: str, tmp_path: Path) -> None:
    done = _verify(CARTPOLE, CARTPOLE / "ports" / backend, json_out=tmp_path / "report.json")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((tmp_path / "report.json").read_text())
    assert [f"{v['level']}.{v['mode']}" for v in report["levels"]] == [
        "reverse.free",
        "reverse.resync",
        "reverse.states",
        "reverse.free@limit",
        "reverse.resync@limit",
    ]
    assert "start states from the port's getter" in done.stdout


def test_a_wrong_state_read_by_the_getter_fails_the_states_reached(
    numpy_port_copy: Path, tmp_path: Path
) -> None:
    env = numpy_port_copy / "env.py"
    source = env.read_text()
    # A counter the getter never advances: the observations cannot show it, the states can.
    wrong = source.replace(
        '"elapsed_steps": np.asarray(state["elapsed_steps"], dtype=np.int64),\n    }\n\n\ndef '
        "states_from_reference",
        '"elapsed_steps": np.zeros_like(state["elapsed_steps"], dtype=np.int64),\n    }\n\n\n'
        "def states_from_reference",
    )
    assert wrong != source
    env.write_text(wrong)
    done = _verify(CARTPOLE, numpy_port_copy, json_out=tmp_path / "report.json")
    assert done.returncode == 1, done.stdout + done.stderr
    report = json.loads((tmp_path / "report.json").read_text())
    states = next(v for v in report["levels"] if v["mode"] == "states")
    assert not states["passed"]
    first = states["divergences"][0]
    assert first["step"] == 0
    assert [f["field"] for f in first["fields"]] == ["state.elapsed_steps"]
    # The observations agree; only the states (and, through the counter the getter loses,
    # the time limit a resynchronised reference never reaches) show it.
    assert all(v["passed"] for v in report["levels"] if v["mode"] in ("free", "resync"))


def _spec_copy(tmp_path: Path, source: Path, old: str, new: str) -> Path:
    spec = tmp_path / "spec"
    shutil.copytree(source, spec, ignore=shutil.ignore_patterns("__pycache__", "replay"))
    toml = spec / "envport.toml"
    text = toml.read_text()
    assert old in text
    toml.write_text(text.replace(old, new))
    return spec


def test_a_spec_whose_observation_does_not_hold_the_state_is_refused(tmp_path: Path) -> None:
    spec = _spec_copy(tmp_path, CARTPOLE, "physics = [0, 1, 2, 3]", "physics = [1, 0, 2, 3]")
    done = _verify(spec, CARTPOLE / "ports" / "envpool")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "state.from_observation.physics" in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_no_getter_and_no_declared_observation_is_refused(tmp_path: Path) -> None:
    spec = _spec_copy(tmp_path, CARTPOLE, "from_observation = { physics = [0, 1, 2, 3] }", "")
    done = _verify(spec, CARTPOLE / "ports" / "envpool")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "state.from_observation" in done.stderr and "getter" in done.stderr


@pytest.mark.parametrize(
    "given",
    [{"module": "env"}, {"levels": ("l1", "l2")}, {"only_episode": 3}, {"port_server": "tcp://x"}],
)
def test_options_that_need_a_state_setter_are_usage_errors(given: dict) -> None:
    options = VerifyOptions(reverse=True, **given)
    with pytest.raises(EnvportError, match="--reverse-injection"):
        verify(str(CARTPOLE), str(CARTPOLE / "ports" / "envpool"), options)


def _goal_on_the_last_step(reference: Reference, start: dict, limit: int) -> list[int] | None:
    """Actions reaching MountainCar's goal on exactly the limit's step from `start`: wait k
    steps pushing right, then push along the velocity (the test's own controller)."""
    for k in range(limit):
        reference.reset(0)
        reference.write_state({**reference.read_state(), **start})
        actions = []
        for t in range(limit):
            velocity = reference.read_state()["physics"][1]
            actions.append(2 if t < k or velocity >= 0 else 0)
            out = reference.step(actions[-1])
            if out.terminated or out.truncated:
                break
        if out.terminated and len(actions) == limit:
            return actions
    return None


def test_envpool_reports_a_goal_on_the_last_step_as_truncation_only() -> None:
    """A real difference from Gymnasium: reaching the goal on step 200 is terminated and
    truncated in Gymnasium, truncated only in envpool (its `terminated = done & ~trunc`).
    Random play never reaches it; an episode constructed on the reference does."""
    spec = load_spec(MOUNTAINCAR)
    reference = Reference(spec)
    constructed: list[int] = []

    def choose(starts: list[dict], planned: list[list]) -> list[list]:
        found = _goal_on_the_last_step(Reference(spec), starts[0], 200)
        assert found is not None
        constructed.append(len(found))
        return [found, *planned[1:]]

    port = MOUNTAINCAR / "ports" / "envpool"
    load = TargetChoice("auto", [], "env").load(port, reverse=True)
    options = L3Options(episodes=4, steps=200, mode="free", seed=0)
    verify_options = VerifyOptions(reverse=True)
    replay = replays(str(MOUNTAINCAR), str(port), verify_options, 4, 200, False)["reverse"]
    with PortWorker(timeout=120, load=load) as worker:
        worker.receive()
        levels = reverse.run_reverse(spec, reference, worker, options, replay, choose)
    assert constructed == [200]
    free = levels[0]
    assert not free.passed and free.diverged_episodes == 1
    first = free.divergences[0]
    assert (first.episode, first.step) == (0, 199)
    fields = {diff.field: (diff.expected, diff.actual) for diff in first.fields}
    assert fields == {"terminated": (True, False)}
    assert np.isclose(first.start_state["physics"][1], 0.0)


def test_a_stochastic_port_follows_the_reference_noise_and_the_junit_lists_what_did_not_run(
    tmp_path: Path,
) -> None:
    frozenlake = ROOT / "examples" / "frozenlake"
    junit = tmp_path / "junit.xml"
    done = _verify(frozenlake, frozenlake / "ports" / "numpy", "--junit", str(junit))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "pass reverse.free" in done.stdout and "pass reverse.states" in done.stdout
    assert "n/a  reverse.resync: not run" in done.stdout
    xml = junit.read_text()
    assert '<skipped message="a step from an injected state would draw its own noise"' in xml


def test_without_the_flag_a_port_that_cannot_load_a_state_is_pointed_to_it() -> None:
    options = VerifyOptions(levels=("l3",), episodes=5)
    report = verify(str(CARTPOLE), str(CARTPOLE / "ports" / "envpool"), options)
    assert not report.passed
    assert "lacks `set_state`" in report.error
    assert "verifies with --reverse-injection" in report.error
