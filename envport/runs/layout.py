"""The run directory: where each part of a run lives, creating one and opening one.

runs/<run-id>/
  run.json           RunState, rewritten atomically after every step
  run.lock           held (flock) by the process driving the run, absent otherwise
  envport.toml       frozen copy of the spec (with the module plan, when one was made)
  port/              the generated package
  transcript.jsonl   journal of every event (see envport.runs.journal)
  cache/             model answers by request hash (envport.llm.ResponseCache)
  reports/           verify.json (last full check), <module>.json, outcome.md
  proposed_tests/    tests the model proposed, kept append-only
  .git/              one commit per iteration
"""

from __future__ import annotations

import fcntl
import os
import re
import secrets
import shutil
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from envport.errors import EnvportError
from envport.runs import harness
from envport.runs.history import History
from envport.runs.state import RunState, load_state, save_state
from envport.spec import SPEC_FILENAME


@dataclass(frozen=True)
class RunDir:
    root: Path

    @property
    def state_file(self) -> Path:
        return self.root / "run.json"

    @property
    def spec_file(self) -> Path:
        return self.root / SPEC_FILENAME

    @property
    def port(self) -> Path:
        return self.root / "port"

    @property
    def transcript(self) -> Path:
        return self.root / "transcript.jsonl"

    @property
    def cache(self) -> Path:
        return self.root / "cache"

    @property
    def reports(self) -> Path:
        return self.root / "reports"

    @property
    def proposed_tests(self) -> Path:
        return self.root / "proposed_tests"

    def load(self) -> RunState:
        return load_state(self.state_file)

    def save(self, state: RunState) -> None:
        save_state(self.state_file, state)


class RunLock:
    """One process drives a run at a time.

    The kernel holds the lock (flock on run.lock) and drops it when its process ends, however
    it ends: nothing on disk can be stale, and no reader can mistake a lock being written for
    an abandoned one. The file names the holder's PID, for the message only.
    """

    def __init__(self, root: Path) -> None:
        self.path = root / "run.lock"
        self._fd: int | None = None

    def acquire(self) -> None:
        while True:
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as error:
                raise EnvportError(f"{self.path}: cannot lock the run ({error})") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = self._holder(fd)
                for _ in range(10):  # a holder that has just won writes its PID in a moment
                    if holder is not None:
                        break
                    time.sleep(0.01)
                    holder = self._holder(fd)
                os.close(fd)
                raise EnvportError(self._busy(holder)) from None
            # The holder before us unlinks the file as it lets go: a lock on a file no longer
            # at the path guards nothing, so take the one that is there now.
            if _same_file(fd, self.path):
                break
            os.close(fd)
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._fd = fd

    def _busy(self, holder: int | None) -> str:
        who = f"process {holder}" if holder else "another process"
        return f"{self.path.parent}: {who} is driving this run; wait for it or stop it"

    def release(self) -> None:
        if self._fd is None:
            return
        self.path.unlink(missing_ok=True)  # while still held, so no one locks a dying file
        os.close(self._fd)
        self._fd = None

    def holder(self) -> int | None:
        """The PID the lock file names (a hint: the lock itself is the kernel's)."""
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except OSError:
            return None
        try:
            return self._holder(fd)
        finally:
            os.close(fd)

    @staticmethod
    def _holder(fd: int) -> int | None:
        try:
            return int(os.pread(fd, 32, 0).decode().strip())
        except (OSError, ValueError):
            return None


def _same_file(fd: int, path: Path) -> bool:
    try:
        there = path.stat()
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (held.st_dev, held.st_ino) == (there.st_dev, there.st_ino)


def new_run_id(spec_name: str, target: str) -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    name = re.sub(r"[^A-Za-z0-9_-]+", "-", spec_name).strip("-") or "run"
    return f"{name}-{target}-{stamp}-{secrets.token_hex(2)}"


def _freeze_harness_files(spec_file: Path, root: Path) -> None:
    """Copy the harness files the spec names by relative path (L1 probes, a stochastic env's
    noise harness) next to the copy, read-only and hashed (`envport.runs.harness`).

    The frozen spec keeps its text, so a relative path in it must resolve in the run too.
    """
    from envport.spec import load_spec

    spec = load_spec(spec_file)
    named = [getattr(target, "probes", None) for target in spec.targets.values()]
    if spec.randomness is not None:
        named.append(spec.randomness.harness)
    named.append(spec.reference.rules)  # a black-box spec's rules document
    frozen: list[Path] = []
    for relative in named:
        if not relative or Path(relative).is_absolute():
            continue
        source = (spec_file.parent / relative).resolve()
        destination = (root / relative).resolve()
        if source.is_file() and destination.is_relative_to(root):
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, destination)
            frozen.append(destination)
    harness.freeze(root, frozen)


def create_run(out: Path, spec_file: Path, state: RunState) -> RunDir:
    """A new run directory with the frozen spec, an empty port and a first commit."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        root = (out / state.run_id).resolve()
        root.mkdir()
    except OSError as error:
        raise EnvportError(f"--out {out}: cannot create the run directory ({error})") from None
    run = RunDir(root)
    try:
        shutil.copyfile(spec_file, run.spec_file)
        _freeze_harness_files(spec_file, root)
        run.port.mkdir()
        run.reports.mkdir()
        history = History.create(root)
        state.head = history.commit(f"start {state.spec_name} -> {state.target}")
        run.save(state)
    except BaseException:
        # Interrupted (or failed) before run.json: nothing was asked yet, so a half-made
        # directory is only in the way of running the command again.
        shutil.rmtree(root, ignore_errors=True)
        raise
    return run


def open_run(path: Path | str) -> RunDir:
    root = Path(path)
    if not root.is_dir():
        raise EnvportError(f"{root}: no such run directory; pass runs/<run-id>")
    run = RunDir(root.resolve())
    if not run.state_file.is_file():
        raise EnvportError(f"{root}: not an envport run (no run.json); pass runs/<run-id>")
    return run
