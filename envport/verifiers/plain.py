"""The last check: the port imported by a plain interpreter replays a sample of L3's steps.

Started once the port's backend is known (`started`) and judged last (`run_plain`): the
interpreter's start and the port's import (JAX's) overlap the other levels.

Every other check runs the port beside the harness, where a port could notice it is being
tested (envport's modules loaded, its frames on the stack) and behave only there. Here a
sample of the steps L3 played (the same seeded episodes) goes to a plain Python that
imports the port as a user would, with nothing of envport loaded (`plain_replay`, run as a
file, inside the sandbox, under a worker's limits: `plain_start`), and its answers are
compared with the reference's. Its inputs go through stdin and its answer comes back
through stdout: nothing of the check is on the host's disk or on the command line. NumPy ports
through their VectorEnv, JAX ports through their one-env `step`, eagerly, as a user calls
them; a Rust port is a library the harness loads, with no plain import to compare.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO

import numpy as np

from envport.gaps import Gap, GapKind
from envport.io.npz import NpzRefused, read_npz
from envport.io.scratch import scratch
from envport.serve import jail
from envport.serve.launch import request_limits
from envport.serve.worker_env import worker_environment
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
# Where the check works inside the sandbox: a sized tmpfs, the interpreter's HOME and
# working directory, named as a user's would be (a worker's is /envport-work).
PLAIN_HOME = "/home/user"


def _answer(data: bytes, returncode: int) -> dict[str, np.ndarray] | str:
    """The runner's answer, read without unpickling."""
    if not data:
        # How it ended says why: a port's exit, a limit's signal (SIGXCPU past its CPU time).
        return f"the plain interpreter wrote no answer ({jail.exit_note(returncode)})"
    if len(data) > _MAX_ANSWER_BYTES:
        return "the plain interpreter's answer is too large"
    try:
        found = read_npz(data, _MAX_ANSWER_MEMBERS, _MAX_ANSWER_BYTES)
    except NpzRefused as error:
        return f"the plain interpreter's answer was refused: {error}"
    if "error" in found:
        return str(found["error"])
    # Which rows it held, and their four outputs (none when it held no row).
    outputs = set(found) - {"held"}
    if "held" not in found or (outputs and outputs != set(Steps.__dataclass_fields__)):
        return f"the plain interpreter's answer has {sorted(found)}"
    return found


def _feed(pipe: IO[bytes], data: bytes) -> None:
    """The inputs, written while the caller goes on (a pipe holds 64 KiB)."""
    try:
        pipe.write(data)
        pipe.close()
    except OSError:
        pass  # the interpreter died first: its missing answer says so


def _collect(pipe: IO[bytes], into: bytearray) -> None:
    """The answer, read up to one byte past the limit (the rest is never held: the pipe is
    closed, so a runner still writing ends on a broken pipe instead of waiting)."""
    while len(into) <= _MAX_ANSWER_BYTES:
        chunk = os.read(pipe.fileno(), 1 << 20)
        if not chunk:
            return
        into += chunk
    pipe.close()


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
    port = ctx.load.port_dir
    inputs |= {"port": np.asarray(port), "entry": np.asarray(ctx.load.entry)}
    inputs["backend"] = np.asarray(str(ctx.report.backend))
    given = io.BytesIO()
    np.savez(given, **inputs)  # type: ignore[arg-type]
    limits = request_limits(ctx.options.timeout)
    command = [sys.executable, "-m", "envport.serve.plain_start", limits.model_dump_json()]
    # The host folder is only the working directory under --unsafe-no-sandbox; inside the
    # sandbox the check works in a tmpfs of the worker's scratch size and sees no host folder.
    with scratch("envport-plain-") as work:
        command = jail.command_line(
            command, None, readable=[port], work_bytes=limits.scratch_bytes, work_dir=PLAIN_HOME
        )
        process = subprocess.Popen(
            command,
            cwd=work,
            env=worker_environment(str(work)),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert process.stdin is not None and process.stdout is not None
        answer = bytearray()
        threads = [
            threading.Thread(target=_feed, args=(process.stdin, given.getvalue()), daemon=True),
            threading.Thread(target=_collect, args=(process.stdout, answer), daemon=True),
        ]
        for thread in threads:
            thread.start()
        try:
            yield PlainStarted(process, answer, threads[1], rows, expected, len(indices))
        finally:
            if process.poll() is None:
                process.kill()
            process.wait()
            for thread in threads:
                thread.join()
            process.stdout.close()


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
        run.reader.join()
        answer = _answer(bytes(run.answer), run.process.returncode)
    if isinstance(answer, str):
        level.passed = False
        level.divergences.append(Divergence(level="l3", mode="plain", message=answer))
        return level
    held = np.asarray(answer["held"])
    if held.dtype != bool or held.shape != (len(rows),) or (held.any() and len(answer) == 1):
        level.passed = False
        malformed = "the plain interpreter's answer is malformed"
        level.divergences.append(Divergence(level="l3", mode="plain", message=malformed))
        return level
    if not held.all():
        # States outside the port's domain (its `can_hold`) are not its steps to compare.
        rows, expected = rows[held], Steps(*(part[held] for part in expected.parts()))
        level.steps_compared = len(rows)
        level.gaps.append(
            Gap(
                check="l3.plain",
                kind=GapKind.STATES_NOT_HELD,
                detail=f"the port cannot hold {int((~held).sum())} of the {len(held)} sampled "
                "states (its `can_hold`); they were not stepped",
            )
        )
    if not len(rows):
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
