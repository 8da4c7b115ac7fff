"""The last check: the port imported by a plain interpreter replays a sample of L3's steps.

Started once the port's backend is known (`started`) and judged last (`run_plain`): the
interpreter's start and the port's import (JAX's) overlap the other levels.

Every other check runs the port beside the harness, where a port could notice it is being
tested (envport's modules loaded, its frames on the stack) and behave only there. Here a
sample of the steps L3 played (the same seeded episodes) goes to a plain Python that
imports the port as a user would, with nothing of envport loaded (`plain_replay`, run as a
file, inside the sandbox), and its answers are compared with the reference's. NumPy ports
through their VectorEnv, JAX ports through their one-env `step`, eagerly, as a user calls
them; a Rust port is a library the harness loads, with no plain import to compare.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from envport.io.npz import NpzRefused, read_npz
from envport.io.scratch import scratch
from envport.serve import jail, plain_replay
from envport.serve.client import scratch_homes, worker_environment
from envport.verifiers.context import PlainStarted, VerifyContext
from envport.verifiers.levels.l3 import rollout as l3
from envport.verifiers.reporting.compare import Steps, divergent_steps
from envport.verifiers.reporting.divergence import Divergence, FieldDiff, LevelResult

SAMPLE_EPISODES = 4
SAMPLE_ROWS = 64
# The outputs of SAMPLE_ROWS steps are far below this; a bigger file is not read, nor one
# whose arrays inflate past it.
_MAX_ANSWER_BYTES = 64 << 20
# Its members: the four outputs, or `error`.
_MAX_ANSWER_MEMBERS = 8
_MESSAGE = "the port imported in a plain interpreter (no envport module) differs from the reference"


def _answer(path: Path) -> dict[str, np.ndarray] | str:
    """The runner's output, read without following a link and without unpickling."""
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return "the plain interpreter wrote no answer"
    with os.fdopen(handle, "rb") as file:
        # Its size first: a read of the limit would allocate the whole limit up front.
        size = os.fstat(file.fileno()).st_size
        if size > _MAX_ANSWER_BYTES:
            return f"the plain interpreter's answer is over {_MAX_ANSWER_BYTES} bytes"
        data = file.read(size)
    try:
        found = read_npz(data, _MAX_ANSWER_MEMBERS, _MAX_ANSWER_BYTES)
    except NpzRefused as error:
        return f"the plain interpreter's answer was refused: {error}"
    if "error" in found:
        return str(found["error"])
    if sorted(found) != sorted(Steps.__dataclass_fields__):
        return f"the plain interpreter's answer has {sorted(found)}"
    return found


@contextmanager
def started(ctx: VerifyContext) -> Iterator[PlainStarted]:
    """Start the plain interpreter on its sample as soon as the port's backend is known, so
    it imports the port (and JAX) and steps while the other levels run; `run_plain` judges
    it. Whatever happens meanwhile, the process is ended and its directory removed."""
    indices = l3.episode_indices(ctx.l3)[:SAMPLE_EPISODES]
    played = l3.play_reference(ctx.reference, ctx.spec, ctx.l3, indices)
    count = min(SAMPLE_ROWS, played.transitions)
    rows = np.unique(np.linspace(0, played.transitions - 1, count).astype(np.int64))
    expected = Steps(*(part[rows] for part in played.steps.parts()))
    inputs = {f"state/{name}": values[rows] for name, values in played.states.items()}
    inputs["actions"] = np.asarray(played.actions)[rows]
    if played.noise is not None:
        inputs["noise"] = played.noise[rows]
    with scratch("envport-plain-") as work:
        np.savez(work / "steps-in.npz", **inputs)  # type: ignore[arg-type]
        runner = plain_replay.__file__
        port = ctx.load.port_dir
        backend = str(ctx.report.backend)
        command = [sys.executable, "-I", runner, port, ctx.load.entry, backend]
        command = jail.command_line(command, work, readable=[port, runner])
        process = subprocess.Popen(
            command,
            cwd=work,
            env={**worker_environment(), **scratch_homes(work)},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            yield PlainStarted(process, work, rows, expected, len(indices))
        finally:
            if process.poll() is None:
                process.kill()
            process.wait()


def run_plain(ctx: VerifyContext, run: PlainStarted) -> LevelResult:
    """The started interpreter's answer against the reference's steps."""
    rows, expected = run.rows, run.expected
    level = LevelResult(level="l3", mode="plain", passed=True, episodes=run.episodes)
    level.steps_compared = len(rows)
    answer: dict[str, np.ndarray] | str
    try:
        run.process.wait(timeout=ctx.options.timeout)
    except subprocess.TimeoutExpired:
        answer = f"the plain interpreter did not finish within {ctx.options.timeout:g} s"
    else:
        answer = _answer(run.work / "steps-out.npz")
    if isinstance(answer, str):
        level.passed = False
        level.divergences.append(Divergence(level="l3", mode="plain", message=answer))
        return level
    actual = Steps(*(answer[name] for name in Steps.__dataclass_fields__))
    found: list[tuple[int, list[FieldDiff]]]
    if any(len(part) != len(rows) for part in actual.parts()):
        found = [(0, [])]
    else:
        found = divergent_steps(ctx.spec, expected, actual, False, np.arange(len(rows)))
    for index, diffs in found[:3]:
        level.passed = False
        level.divergences.append(
            Divergence(
                level="l3", mode="plain", step=int(rows[index]), fields=diffs, message=_MESSAGE
            )
        )
    level.diverged_episodes = len(found)
    return level
