"""`--executor ray`: L3's chunks as Ray tasks on a real local Ray instance.

One Ray instance for the module (two CPUs, no dashboard), started after a stand-in API key
is put in this process's environment, so every Ray worker inherits it as a cluster node's
processes would: the sandboxed port workers those Ray workers start must still not see it.
Without Ray installed (an import made to fail in a real subprocess), `--executor ray` is one
line and exit 2.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_batch import (
    CALLS_PER_RUN,
    MODELS,
    SECRET,
    batch_command,
    batch_file,
    canonical,
    last_event,
    run_dirs,
    status,
)
from test_batch import model as batch_model

from envport.batch.money import Ledger
from envport.errors import PortError
from envport.spec import load_spec
from envport.targets.registry import load_request
from envport.verifiers.levels.l3 import on_ray as l3_ray
from envport.verifiers.options import L3Options
from envport.verifiers.reporting.replay import replays
from envport.verifiers.selfcheck import apply_mutant, load_mutants
from envport.verifiers.verify import VerifyOptions, verify

from fake_api import FakeAPI
from helpers import (
    CARTPOLE,
    NUMPY_PORT,
    ROOT,
    assert_lock_freed,
    payload_place,
    plant_code,
    user_env,
)
from run_fixtures import clean_env, fast_spec

ray = pytest.importorskip("ray")

STAND_IN_KEY = "sk-ant-stand-in-for-the-ray-test-0000"
HOSTILE = Path(__file__).parent / "hostile"


@pytest.fixture(scope="module")
def local_ray() -> Iterator[Any]:
    saved = os.environ.get("ANTHROPIC_API_KEY")
    os.environ["ANTHROPIC_API_KEY"] = STAND_IN_KEY
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield ray
    finally:
        ray.shutdown()
        if saved is None:
            os.environ.pop("ANTHROPIC_API_KEY", None)
        else:
            os.environ["ANTHROPIC_API_KEY"] = saved


VERIFY_L3 = [sys.executable, "-m", "envport", "verify", str(CARTPOLE), "--port", str(NUMPY_PORT)]
VERIFY_L3 += ["--levels", "l3"]


def _verify_on_ray(env: dict[str, str]) -> subprocess.CompletedProcess:
    """`envport verify --levels l3 --executor ray` as a user runs it, in `env`."""
    return subprocess.run(
        [*VERIFY_L3, "--executor", "ray"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env=env,
    )


def test_a_cluster_address_where_nothing_listens_is_one_line_and_exit_2() -> None:
    # RAY_ADDRESS as a user sets it; port 9 (discard) on loopback: nothing listens there.
    env = user_env(RAY_ADDRESS="127.0.0.1:9")
    done = _verify_on_ray(env)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        "envport: --executor ray: no Ray cluster answers at 127.0.0.1:9 (Connection refused); "
        "start one with `ray start --head` or fix --address / $RAY_ADDRESS"
    ]


def test_without_ray_the_ray_executor_is_one_line_and_exit_2(tmp_path: Path) -> None:
    # A real interpreter in which `import ray` fails, as on an install without the extra.
    (tmp_path / "sitecustomize.py").write_text(
        "import sys\n"
        "class _NoRay:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'ray' or name.startswith('ray.'):\n"
        "            raise ImportError('No module named ray')\n"
        "sys.meta_path.insert(0, _NoRay())\n"
    )
    env = user_env(PYTHONPATH=str(tmp_path))
    env.pop("RAY_ADDRESS", None)
    done = _verify_on_ray(env)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr
    assert "--executor ray needs Ray" in lines[0] and "envport[ray]" in lines[0]


# --- envport batch --executor ray (before the module's Ray starts: the batch starts its own)


@pytest.fixture
def api() -> Iterator[FakeAPI]:
    with FakeAPI(responder=batch_model) as server:
        yield server


def test_total_cap_ledger_decides_as_the_local_rule() -> None:
    ledger = Ledger(1.0, {"a": 0.25, "b": 0.0, "c": 0.0})
    assert ledger.ask("b", 0.5).action == "start"  # 0.25 spent + 0.5 handed out
    waiting = ledger.ask("c", 0.5)
    assert waiting.action == "wait"  # b might still spend its whole cap
    ledger.ended("b", 0.1)
    assert ledger.ask("c", 0.5).action == "start"  # 0.25 + 0.1 + 0.5 <= 1.0
    ledger.ended("c", 0.6)
    assert ledger.ask("b", 0.5).action == "never"  # nothing running, no room left


def between_calls(runs: dict[str, Path]) -> bool:
    """The run has made a model call, and none is in flight (its last event an edit)."""
    return bool(runs) and all(
        status(run) == "running" and last_event(run) in ("edit", "proposed_test")
        for run in runs.values()
    )


@pytest.mark.slow
def test_a_batch_on_ray_killed_mid_run_resumes_without_repeating_a_model_request(
    tmp_path: Path, api: FakeAPI
) -> None:
    spec = fast_spec(tmp_path / "spec")
    # One run: killed between two of its model calls, resumed by running the batch again.
    path = batch_file(
        tmp_path,
        f'[[runs]]\nspec = "{spec}"\ntarget = "numpy"\nmodel = "openai:{MODELS[0]}"\n'
        f'base_url = "{api.openai_base_url}"\n',
    )
    out = tmp_path / "runs" / "BATCH"
    env = clean_env(OPENAI_API_KEY=SECRET)
    env.pop("RAY_ADDRESS", None)
    command = [*batch_command(path), "--executor", "ray"]
    process = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT
    )
    try:
        deadline = time.monotonic() + 150
        # A kill point with a call still to come (on an idle machine the checks after an
        # edit take milliseconds: the poll has no pause).
        while not (
            out.is_dir() and api.total_hits < CALLS_PER_RUN and between_calls(run_dirs(out))
        ):
            assert process.poll() is None, "the batch ended before the kill point"
            assert time.monotonic() < deadline, "never reached a kill point"
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
        # The calls made when the batch died. Its run on a Ray worker may finish one more
        # before Ray ends it (while its lock is freed, below): the resume must not ask
        # that one again either.
        hits_at_kill = api.total_hits
    finally:
        process.kill()
    before = run_dirs(out)
    unfinished = [name for name, run in before.items() if status(run) != "verified"]
    assert unfinished, "the kill came after the last run"
    for name in unfinished:  # the runs on Ray died with the batch: no lock held
        assert_lock_freed(before[name], 30)

    again = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    assert again.returncode == 0, again.stdout + again.stderr
    after = run_dirs(out)
    assert len(after) == 1 and all(status(run) == "verified" for run in after.values())
    repeats = Counter(canonical(request.body) for request in api.requests)
    assert max(repeats.values()) == 1, "a model request was sent twice"
    assert 0 < hits_at_kill < CALLS_PER_RUN == api.total_hits
    for file in out.rglob("*"):
        if file.is_file():
            assert SECRET.encode() not in file.read_bytes(), file


# --- envport verify --executor ray ---------------------------------------------------------


def _report(port: Path, executor: str) -> Any:
    # No exploration: it starts from what the levels' coverage missed, and L3's chunks on
    # Ray are not measured, so it would run there and not here.
    options = VerifyOptions(
        levels=("l3",), episodes=90, workers=2, executor=executor, explore_steps=0
    )
    return verify(str(CARTPOLE), str(port), options)


def _levels(report: Any) -> list[dict[str, Any]]:
    return [level.model_dump(exclude={"seconds"}) for level in report.levels]


@pytest.mark.slow
def test_the_report_is_the_same_over_local_lanes_and_over_ray(
    local_ray: Any, tmp_path: Path
) -> None:
    mutant = next(m for m in load_mutants(CARTPOLE) if m.id == "numpy-theta-threshold")
    bad = apply_mutant(mutant, NUMPY_PORT, tmp_path / "numpy")
    for port, passes in ((NUMPY_PORT, True), (bad, False)):
        here, there = _report(port, "local"), _report(port, "ray")
        assert here.error is None and there.error is None, (here.error, there.error)
        assert here.passed is there.passed is passes
        assert _levels(here) == _levels(there)
        # The bounds' coverage too: counted per chunk on Ray, merged on the driver.
        (bounds,) = [lv for lv in there.levels if lv.name == "l3.bounds"]
        assert bounds.steps_compared > 0 and here.warnings == there.warnings
        if not passes:
            first = there.levels[0].divergences[0]
            assert first.episode == here.levels[0].divergences[0].episode
            assert [d.replay for lv in here.levels for d in lv.divergences] == [
                d.replay for lv in there.levels for d in lv.divergences
            ]
            assert there.levels[0].diverged_episodes > 0 and first.replay


def _job(port: Path, timeout: float = 60.0) -> tuple[Any, ...]:
    spec = load_spec(CARTPOLE)
    options = L3Options(episodes=40, steps=200, mode="both")
    replay = replays(str(CARTPOLE), str(port), VerifyOptions(), 40, 200, True)["l3"]
    spec_file = str(CARTPOLE / "envport.toml")
    return (spec, spec_file, load_request(spec, port), options, replay, timeout)


def _planted(port_copy: Path, payload: str, where: str = "import") -> Path:
    code = (HOSTILE / payload).read_text() if payload.endswith(".py") else payload
    return plant_code(port_copy, code, where)


@pytest.mark.parametrize(
    ("payload", "shown"),
    [("read_keys.py", "leaked: {}"), ("proc_environ.py", "environ leaked: []")],
)
def test_a_hostile_port_on_a_ray_worker_sees_no_key(
    local_ray: Any, numpy_port_copy: Path, payload: str, shown: str
) -> None:
    # The Ray workers hold the key (inherited, as on a node); the port's worker must not.
    seen = ray.get(ray.remote(lambda: os.environ.get("ANTHROPIC_API_KEY")).remote())
    assert seen == STAND_IN_KEY
    port = _planted(numpy_port_copy, payload)
    with pytest.raises(PortError) as failed:
        l3_ray.run_l3(*_job(port))
    assert shown in str(failed.value) and STAND_IN_KEY not in str(failed.value)


@pytest.mark.slow
def test_a_port_over_its_memory_limit_on_a_ray_worker_fails_as_locally(
    local_ray: Any, numpy_port_copy: Path
) -> None:
    port = _planted(numpy_port_copy, "huge_alloc.py", where=_where("huge_alloc.py"))
    with pytest.raises(PortError, match="MemoryError"):
        l3_ray.run_l3(*_job(port))


@pytest.mark.slow
def test_a_port_that_hangs_on_a_ray_worker_fails_within_its_timeout(
    local_ray: Any, numpy_port_copy: Path
) -> None:
    port = _planted(numpy_port_copy, "import time\ntime.sleep(3600)\n", where="step")
    with pytest.raises(PortError, match="did not answer `rollout` within 10 s"):
        l3_ray.run_l3(*_job(port, timeout=10.0))


def _where(payload: str) -> str:
    return payload_place((HOSTILE / payload).read_text())


def _kill_a_chunk_worker(killed: list[int], stop: threading.Event) -> None:
    """SIGKILL the first Ray worker process seen running a chunk (its title says so)."""
    while not stop.is_set():
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                command = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            if command.startswith(b"ray::check_chunk"):
                os.kill(int(pid), signal.SIGKILL)
                killed.append(int(pid))
                return
        time.sleep(0.005)


@pytest.mark.slow
def test_a_ray_worker_killed_mid_run_changes_nothing_in_the_report(
    local_ray: Any, tmp_path: Path
) -> None:
    mutant = next(m for m in load_mutants(CARTPOLE) if m.id == "numpy-theta-threshold")
    port = apply_mutant(mutant, NUMPY_PORT, tmp_path / "numpy")
    spec, spec_file, load, _, replay, timeout = _job(port)
    options = L3Options(episodes=2000, steps=200, mode="both")
    replay = replays(str(CARTPOLE), str(port), VerifyOptions(), 2000, 200, True)["l3"]
    calm = l3_ray.run_l3(spec, spec_file, load, options, replay, timeout, lanes=2)
    killed: list[int] = []
    stop = threading.Event()
    killer = threading.Thread(target=_kill_a_chunk_worker, args=(killed, stop))
    killer.start()
    try:
        disturbed = l3_ray.run_l3(spec, spec_file, load, options, replay, timeout, lanes=2)
    finally:
        stop.set()
        killer.join()
    assert killed, "no chunk was seen running"
    assert [lv.model_dump(exclude={"seconds"}) for lv in disturbed] == [
        lv.model_dump(exclude={"seconds"}) for lv in calm
    ]
    assert calm[0].episodes == 2000 and calm[0].diverged_episodes > 0
