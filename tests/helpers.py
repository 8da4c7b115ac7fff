"""Shared paths and helpers for the test suite (tests/ is on sys.path under pytest)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from envport.serve.client import PortWorker

ROOT = Path(__file__).resolve().parent.parent
CARTPOLE = ROOT / "examples" / "cartpole"
JAX_PORT = CARTPOLE / "ports" / "jax"
NUMPY_PORT = CARTPOLE / "ports" / "numpy"


# What a user's login shell has that a command may need. Everything else the test process
# holds (a variable a test set, or one an import set: envpool sets MPLCONFIGDIR when imported)
# stays out of the commands the tests run, so they see the machine a user sees.
USER_SHELL_VARS = (
    "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "TERM",
    "TZ", "TMPDIR", "CI",
    # Set machine-wide on some processors here (older OpenBLAS builds crash without them).
    "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE",
)  # fmt: skip
# What could point a run at a real model: never in an offline translate's environment.
KEY_ENVS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_BASE_URL")


def user_env(**extra: str) -> dict[str, str]:
    """The environment of a user's shell with the project's virtualenv active and no API key
    set, plus `extra`: built from an allow-list, never a copy of this process's environment."""
    env = {name: os.environ[name] for name in USER_SHELL_VARS if name in os.environ}
    # envport's own settings a test set on purpose (a cache directory of its own): no import
    # sets these, and the command must use what the test process uses.
    env |= {name: value for name, value in os.environ.items() if name.startswith("ENVPORT_")}
    venv_bin = str(Path(sys.executable).parent)
    env["PATH"] = os.pathsep.join([venv_bin, os.environ.get("PATH", os.defpath)])
    if sys.prefix != sys.base_prefix:
        env["VIRTUAL_ENV"] = sys.prefix
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra)
    return env


def run_envport(
    *args: str, timeout: float = 300, cwd: Path = ROOT, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """Run the real command line in a subprocess, as a user or a CI job would (`env`: that
    user's environment, helpers.user_env() by default)."""
    env = env if env is not None else user_env()
    return subprocess.run(
        [sys.executable, "-m", "envport", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env=env,
    )


def started_worker(example: Path, port: Path, target: str) -> PortWorker:
    """A worker hosting `port` (a real subprocess, as `envport verify` starts it), loaded."""
    from envport.spec import load_spec
    from envport.targets.registry import load_request

    worker = PortWorker(timeout=300, load=load_request(load_spec(example), port, target))
    worker.receive()
    return worker


def plant_code(port: Path, code: str, where: str = "import") -> Path:
    """Hostile `code` planted in a port copy's env.py: at import time (appended to the
    module) or at the top of `step` ("step")."""
    env = port / "env.py"
    text = env.read_text()
    if where == "import":
        text += "\n\n" + code
    else:
        body = "".join(f"        {line}\n" if line.strip() else "\n" for line in code.splitlines())
        marker = "    def step(self, actions):\n"
        text = text.replace(marker, marker + body)
    env.write_text(text)
    return port


def payload_place(code: str) -> str:
    """Where a hostile payload asks to be planted: its first line, `# where: import|step`."""
    return code.splitlines()[0].removeprefix("# where: ").strip()


def assert_lock_freed(run: Path, seconds: float) -> None:
    """The run's lock becomes free within `seconds`: whatever held it (a run's process that
    dies with its batch) is gone. Dying takes a moment under load."""
    from envport.errors import EnvportError
    from envport.runs.layout import RunLock

    lock, gone_by = RunLock(run), time.monotonic() + seconds
    while True:
        try:
            lock.acquire()
            break
        except EnvportError:
            assert time.monotonic() < gone_by, f"{run.name}: its process outlived the batch"
            time.sleep(0.1)
    lock.release()


def translated_offline(spec: Path, target: str, out: Path, timeout: float = 400) -> Path:
    """`envport translate` as a subprocess with no key (the example's replay session
    answers), asserted verified with L2 and L3 passed on the whole port; the run."""
    env = user_env()
    words = ["translate", str(spec), "--target", target, "--out", str(out)]
    result = subprocess.run(
        [sys.executable, "-m", "envport", *words],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env=env,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "(hand-written answers)" in result.stdout
    (run,) = out.iterdir()
    assert json.loads((run / "run.json").read_text())["status"] == "verified"
    report = json.loads((run / "reports" / "verify.json").read_text())
    assert report["passed"] and {lv["level"] for lv in report["levels"]} >= {"l2", "l3"}
    return run


def with_budgets(example: Path, destination: Path, budgets: dict[str, dict[str, int]]) -> Path:
    """A copy of `example` (its ports left out) whose spec has `budgets` in place of its own
    (`{"levels.l1": {"examples": 60}}`): a slow test runs a check at the smallest budget that
    still fails on its bug, never the example's full one."""
    shutil.copytree(example, destination, ignore=shutil.ignore_patterns("ports", "__pycache__"))
    spec = destination / "envport.toml"
    lines = spec.read_text().splitlines()
    for table, values in budgets.items():
        header = f"[{table}]"
        if header not in lines:
            lines += ["", header]
        start = lines.index(header) + 1
        end = next((i for i in range(start, len(lines)) if lines[i].startswith("[")), len(lines))
        for key, number in values.items():
            found = [i for i in range(start, end) if lines[i].split("=")[0].strip() == key]
            if found:
                lines[found[0]] = f"{key} = {number}"
            else:
                lines.insert(start, f"{key} = {number}")
                end += 1
    spec.write_text("\n".join(lines) + "\n")
    return destination


def divergent_fields(report: Any) -> set[str]:
    """Every field any divergence of a verify report names."""
    return {
        diff.field
        for level in report.levels
        for divergence in level.divergences
        for diff in divergence.fields
    }


def check_failures(run: Path) -> list[str]:
    """The first failure line of every failed check outcome in the run's transcript, in order."""
    found = []
    for line in (run / "transcript.jsonl").read_text().splitlines():
        event = json.loads(line)
        if event["event"] == "check":
            found += [o["failures"][0] for o in event["outcomes"] if not o["passed"]]
    return found


class Tables(HTMLParser):
    """The report's grid pictures: per table its side, field, and cells (class, title)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[dict] = []
        self.field = ""
        self.inside = False  # within a grid table (the page has other tables)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        classes = (found.get("class") or "").split()
        if tag == "div" and "grid-pair" in classes:
            self.field = found.get("data-field") or ""
        if tag == "table" and "grid" in classes:
            self.inside = True
            self.tables.append({"side": classes[1], "field": self.field, "rows": []})
        if self.inside and tag == "tr":
            self.tables[-1]["rows"].append([])
        if self.inside and tag == "td":
            self.tables[-1]["rows"][-1].append((found.get("class") or "", found.get("title") or ""))

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self.inside = False


@contextmanager
def quiet_pettingzoo() -> Iterator[None]:
    """PettingZoo logs a warning on every illegal move (and keeps each in a queue): the
    side-by-side games make hundreds on purpose."""
    import logging

    from pettingzoo.utils.env_logger import EnvLogger

    logger = logging.getLogger(EnvLogger.__module__)
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)
        EnvLogger.flush()


def chess_bridge() -> Any:
    """examples/chess's state bridge, loaded from its file (a harness module, not a package)."""
    import importlib.util

    path = ROOT / "examples" / "chess" / "harness" / "reference.py"
    spec = importlib.util.spec_from_file_location("chess_bridge", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def chess_leaves(env: Any, bridge: Any = None) -> dict[str, Any]:
    """A chess_v6 env's state as a port receives it: the example's bridge read, its list of
    positions padded to 100 rows with the length beside (as envport's structure layer does)."""
    import numpy as np

    state = (bridge or chess_bridge()).read_state(env)
    rows = np.asarray(state.pop("positions"), dtype=np.int64).reshape(-1, 67)
    positions = np.zeros((100, 67), dtype=np.int64)
    positions[: len(rows)] = rows
    leaves = {name: np.asarray(value, dtype=np.int64) for name, value in state.items()}
    return {**leaves, "positions": positions, "positions.length": np.int64(len(rows))}


def assert_known_good_parallel_port_verifies(example: Path, target: str) -> None:
    """An MPE example's known-good port, L1 to L3 at budgets cut to keep the slow tier's
    time (exploration left to the full check). A NumPy port's VectorEnv is held by
    l2.vector too (a reward per agent); a float32 JAX port's draws are restricted to its
    declared domain (entities 0.05 apart or more), and the report says so."""
    from envport.verifiers.verify import VerifyOptions, verify

    options = VerifyOptions(target=target, examples=40, episodes=12, explore_steps=0)
    report = verify(str(example), str(example / "ports" / target), options)
    assert report.passed, report.text()
    passed = {f"{level.level}.{level.mode}" for level in report.levels if level.passed}
    assert {"l1.transition", "l2.interaction", "l2.batch", "l2.reset"} <= passed, passed
    assert {"l3.free", "l3.resync"} <= passed, passed
    if target == "numpy":
        assert "l2.vector" in passed and not report.not_run, report.not_run
    else:
        assert report.restricted_to


def cartpole_batch(size: int) -> Any:
    """A StepBatch of `size` CartPole envs, each at the reference's seed-0 start, pushed left."""
    import numpy as np

    from envport.serve.ops import StepBatch
    from envport.spec import load_spec
    from envport.targets.reference import Reference

    reference = Reference(load_spec(CARTPOLE))
    reference.reset(0)
    state = reference.read_state()
    states = {k: np.stack([np.asarray(v)] * size) for k, v in state.items()}
    return StepBatch(states=states, actions=np.zeros(size, dtype=np.int64))


def prompt_context(spec_dir: Path, target: str) -> str:
    """The stable context a translate run's prompts start with, for the spec in `spec_dir`
    and `target`, rendered as the driver renders it (no model, no run directory)."""
    from envport.pipeline.prompting import PromptBuilder, target_info
    from envport.pipeline.sources.reading import read_rules, read_sources
    from envport.prompts.render import Prompts
    from envport.runs.state import RunState
    from envport.spec import load_spec

    spec = load_spec(spec_dir)
    builder = PromptBuilder(
        Prompts(), spec, read_sources(spec), target_info(target), read_rules(spec)
    )
    state = RunState(
        run_id="r",
        spec_source="s",
        spec_name=spec.name,
        target=target,
        model="replay:x",
        modules=spec.target(target).modules,
        entry="env",
    )
    return builder.context(state)
