"""`--executor ray`: L3's chunks as Ray tasks on a real local Ray instance.

One Ray instance for the module (two CPUs, no dashboard), started after a stand-in API key
is put in this process's environment, so every Ray worker inherits it as a cluster node's
processes would: the sandboxed port workers those Ray workers start must still not see it.
Without Ray installed (an import made to fail in a real subprocess), `--executor ray` is one
line and exit 2.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from envport.errors import PortError
from envport.spec import load_spec
from envport.targets.registry import load_request
from envport.verifiers import l3, l3_ray
from envport.verifiers.replay import replays
from envport.verifiers.selfcheck import apply_mutant, load_mutants
from envport.verifiers.verify import VerifyOptions, verify

from helpers import CARTPOLE, NUMPY_PORT, ROOT

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
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    env.pop("RAY_ADDRESS", None)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "envport",
            "verify",
            str(CARTPOLE),
            "--port",
            str(NUMPY_PORT),
            "--levels",
            "l3",
            "--executor",
            "ray",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env=env,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr
    assert "--executor ray needs Ray" in lines[0] and "envport[ray]" in lines[0]


def _report(port: Path, executor: str) -> Any:
    options = VerifyOptions(levels=("l3",), episodes=90, workers=2, executor=executor)
    return verify(str(CARTPOLE), str(port), options)


def _levels(report: Any) -> list[dict[str, Any]]:
    return [level.model_dump(exclude={"seconds"}) for level in report.levels]


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
        if not passes:
            first = there.levels[0].divergences[0]
            assert first.episode == here.levels[0].divergences[0].episode
            assert [d.replay for lv in here.levels for d in lv.divergences] == [
                d.replay for lv in there.levels for d in lv.divergences
            ]
            assert there.levels[0].diverged_episodes > 0 and first.replay


def _job(port: Path, timeout: float = 60.0) -> tuple[Any, ...]:
    spec = load_spec(CARTPOLE)
    options = l3.L3Options(episodes=40, steps=200, mode="both")
    replay = replays(str(CARTPOLE), str(port), VerifyOptions(), 40, 200, True)["l3"]
    spec_file = str(CARTPOLE / "envport.toml")
    return (spec, spec_file, load_request(spec, port), options, replay, timeout)


def _planted(port_copy: Path, payload: str, where: str = "import") -> Path:
    env = port_copy / "env.py"
    code = (HOSTILE / payload).read_text() if payload.endswith(".py") else payload
    text = env.read_text()
    if where == "import":
        text += "\n\n" + code
    else:
        body = "".join(f"        {line}\n" if line.strip() else "\n" for line in code.splitlines())
        marker = "    def step(self, actions):\n"
        text = text.replace(marker, marker + body)
    env.write_text(text)
    return port_copy


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


def test_a_port_over_its_memory_limit_on_a_ray_worker_fails_as_locally(
    local_ray: Any, numpy_port_copy: Path
) -> None:
    port = _planted(numpy_port_copy, "huge_alloc.py", where=_where("huge_alloc.py"))
    with pytest.raises(PortError, match="MemoryError"):
        l3_ray.run_l3(*_job(port))


def test_a_port_that_hangs_on_a_ray_worker_fails_within_its_timeout(
    local_ray: Any, numpy_port_copy: Path
) -> None:
    port = _planted(numpy_port_copy, "import time\ntime.sleep(3600)\n", where="step")
    with pytest.raises(PortError, match="did not answer `rollout` within 10 s"):
        l3_ray.run_l3(*_job(port, timeout=10.0))


def _where(payload: str) -> str:
    return (HOSTILE / payload).read_text().splitlines()[0].removeprefix("# where: ").strip()
