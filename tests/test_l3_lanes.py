"""L3 in lanes and chunks: the answer does not depend on how the work was spread.

Real reference envs, real port workers, the known-good CartPole ports. No mocks: where the
order of requests is checked, a real PortWorker is wrapped to note what it was asked.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from envport.serve.client import PortWorker
from envport.serve.ops import Rollout, StepBatch
from envport.spec import load_spec
from envport.targets.loader import import_modules
from envport.targets.reference import Reference
from envport.targets.registry import load_request
from envport.verifiers.draws.policies import Planner, plan_actions
from envport.verifiers.levels.l3 import lanes as l3_lanes
from envport.verifiers.levels.l3 import rollout as l3
from envport.verifiers.levels.l3.played import Played
from envport.verifiers.options import L3Options
from envport.verifiers.reporting.divergence import VerifyReport
from envport.verifiers.reporting.replay import replays
from envport.verifiers.selfcheck import apply_mutant, load_mutants
from envport.verifiers.verify import VerifyOptions, verify

from helpers import CARTPOLE, JAX_PORT, NUMPY_PORT


def _played(episodes: int, indices: list[int] | None = None) -> Played:
    spec = load_spec(CARTPOLE)
    options = L3Options(episodes=episodes, steps=500, mode="both")
    return l3.play_reference(Reference(spec), spec, options, indices)


def _rows(played: Played, number: int) -> slice:
    start = int(played.starts[number])
    return slice(start, start + int(played.lengths[number]))


def test_an_episode_played_alone_is_the_episode_played_in_a_run() -> None:
    # What makes `--episode N` replay exactly what the run compared.
    run, alone = _played(40), _played(40, [17])
    rows = _rows(run, 17)
    assert alone.plans == [run.plans[17]]
    np.testing.assert_array_equal(alone.actions, run.actions[rows])
    np.testing.assert_array_equal(alone.steps.obs, run.steps.obs[rows])
    for name, values in alone.states.items():
        np.testing.assert_array_equal(values, run.states[name][rows])


def test_actions_drawn_in_blocks_equal_the_actions_drawn_at_once() -> None:
    space = Reference(load_spec(CARTPOLE)).action_space
    planner = Planner(3)
    for policy in ("uniform", "sticky", "biased"):
        lazily = list(planner.actions(policy, space, 9, 100))
        assert lazily == plan_actions(policy, space, 3, 9, 100)
        assert lazily != plan_actions(policy, space, 3, 10, 100)  # episodes differ
    with pytest.raises(ValueError, match="unknown policy"):
        next(planner.actions("greedy", space, 0, 5))


def test_played_episodes_cut_pad_and_cross_the_wire_intact() -> None:
    played = _played(12)
    assert played.transitions == len(played.actions) == len(played.steps.reward)
    cut = played.within(3)
    assert cut.lengths.tolist() == np.minimum(played.lengths, 3).tolist()
    for number in range(len(played)):
        first = int(played.starts[number])
        np.testing.assert_array_equal(
            cut.steps.obs[_rows(cut, number)], played.steps.obs[first : first + 3]
        )
    padded = played.padded_actions()
    assert padded.shape == (12, int(played.lengths.max()))
    for number in range(len(played)):
        actions = played.actions[_rows(played, number)]
        np.testing.assert_array_equal(padded[number, : len(actions)], actions)
        assert (padded[number, len(actions) :] == actions[-1]).all()
    back = Played.from_wire(played.to_wire())
    assert back.plans == played.plans and back.endings() == played.endings()
    np.testing.assert_array_equal(back.steps.obs, played.steps.obs)
    joined = Played.join([played, _played(3)])
    assert len(joined) == 15 and joined.transitions == played.transitions + _played(3).transitions


def test_the_report_is_the_same_over_one_lane_or_three(tmp_path: Path) -> None:
    mutant = next(m for m in load_mutants(CARTPOLE) if m.id == "numpy-theta-threshold")
    port = apply_mutant(mutant, NUMPY_PORT, tmp_path / "numpy")
    reports = [
        verify(str(CARTPOLE), str(port), VerifyOptions(levels=("l3",), episodes=90, workers=n))
        for n in (1, 3)
    ]
    one, three = ([level.model_dump(exclude={"seconds"}) for level in r.levels] for r in reports)
    assert not reports[0].passed and reports[0].error is None
    assert one == three
    assert one[0]["steps_compared"] > 90 and one[0]["diverged_episodes"] > 0


class Noting:
    """A real PortWorker, with a note of every request sent and every answer taken."""

    def __init__(self, worker: PortWorker) -> None:
        self.worker = worker
        self.socket = worker.socket
        self.log: list[tuple[str, str, int]] = []

    def send(self, op: Rollout | StepBatch) -> None:
        self.log.append(("send", op.op, len(op.actions)))
        self.worker.send(op)

    def receive(self, timeout: float | None = None) -> Any:
        answer = self.worker.receive(timeout)
        self.log.append(("answer", "", 0))
        return answer

    def ready(self) -> bool:
        return self.worker.ready()


def test_the_port_never_holds_a_chunks_reference_states_before_answering_its_free_run() -> None:
    spec = load_spec(CARTPOLE)
    options = L3Options(episodes=100, steps=500, mode="both")
    load = load_request(spec, NUMPY_PORT)
    with PortWorker(load=load) as worker:
        worker.receive()
        noting = Noting(worker)
        replay = replays(str(CARTPOLE), str(NUMPY_PORT), VerifyOptions(), 100, 500, True)["l3"]
        levels = l3_lanes.run_l3(spec, options, replay, noting, Reference(spec))
    assert all(level.passed for level in levels)
    sends = [op for kind, op, _ in noting.log if kind == "send"]
    assert len(sends) == 2 * 4  # 100 episodes: chunks of 32, 32, 32 and 4, two requests each
    outstanding, last_sent = 0, ""
    free_answered = resync_sent = 0
    for kind, op, _ in noting.log:
        if kind == "answer":
            outstanding -= 1
            free_answered += last_sent == "rollout"
            continue
        outstanding += 1
        assert outstanding == 1, "a second request was sent before the first was answered"
        last_sent = op
        if op == "step_batch":
            # The k-th resync (chunk k's reference states) only after the k-th free answer.
            resync_sent += 1
            assert resync_sent <= free_answered


def test_jax_chunks_of_any_shape_share_one_compiled_rollout() -> None:
    from envport.targets.jax_port import JaxPort

    spec = load_spec(CARTPOLE)
    entry = import_modules(JAX_PORT, [m.model_dump() for m in spec.target("jax").modules], "env")
    port = JaxPort(entry)
    played = _played(9)
    big, small = played, Played.join([_played(3)])
    answers = []
    for chunk in (big, small):
        request = l3.free_request(chunk)
        padded = port.rollout(**request.args(), pad_to=[16, 500])
        exact = port.rollout(**request.args())
        answers.append(padded)
        assert padded["obs"].shape == exact["obs"].shape == (*request.actions.shape, 4)
        for name in ("obs", "reward", "terminated", "truncated"):
            np.testing.assert_array_equal(padded[name], exact[name])
    assert answers[0]["compile_s"] > 0 and answers[1]["compile_s"] == 0


def edited_numpy_port(tmp_path: Path, old: str, new: str) -> Path:
    """A copy of the known-good NumPy port with one edit to env.py."""
    port = tmp_path / "numpy"
    shutil.copytree(NUMPY_PORT, port, ignore=shutil.ignore_patterns("__pycache__"))
    env = port / "env.py"
    text = env.read_text(encoding="utf-8")
    assert text.count(old) == 1
    env.write_text(text.replace(old, new), encoding="utf-8")
    return port


def test_a_batched_bridge_that_disagrees_with_the_per_env_one_fails_the_port(
    tmp_path: Path,
) -> None:
    port = edited_numpy_port(
        tmp_path,
        "    return state_from_reference(ref_states)",
        "    out = state_from_reference(ref_states)\n"
        '    out["physics"] = out["physics"] * 0.5\n'
        "    return out",
    )
    report = verify(str(CARTPOLE), str(port), VerifyOptions(levels=("l3",), episodes=20))
    said = raised_in_l3(report)
    assert "states_from_reference" in said and "disagrees with `state_from_reference`" in said


def raised_in_l3(report: VerifyReport) -> str:
    """What the port raised in L3: a failed check with the port's words and its replay line
    (the verify goes on; docs/verification.md), not the verify's end."""
    assert report.error is None and not report.passed
    # (l3.plain, which runs the port too, fails on its own.)
    (failed,) = [level for level in report.levels if level.name == "l3"]
    (divergence,) = failed.divergences
    assert divergence.replay.startswith("envport verify") and "--levels l3" in divergence.replay
    return divergence.message


def test_a_port_failing_in_any_lane_fails_l3_with_its_error(tmp_path: Path) -> None:
    port = edited_numpy_port(
        tmp_path,
        "    def step(self, actions):\n",
        "    def step(self, actions):\n"
        "        if self.num_envs > 40:\n"
        "            raise RuntimeError('too many envs for this port')\n",
    )
    options = VerifyOptions(levels=("l3",), episodes=600, workers=2)
    report = verify(str(CARTPOLE), str(port), options)
    assert "too many envs for this port" in raised_in_l3(report)
