"""The run directory: where each part of a run lives, creating one and opening one.

runs/<run-id>/
  run.json           RunState, rewritten atomically after every step
  run.lock           held (flock) by the process driving the run, absent otherwise
  envport.toml       frozen copy of the spec (with the module plan, when one was made)
  port/              the generated package
  transcript.jsonl   journal of every event (see envport.runs.journal)
  cache/             model answers by request hash (envport.llm.ResponseCache); checks,
                     bench and optimisation caches; jax/, the ports' compiled programs
  reports/           verify.json (last full check), <module>.json, outcome.md
  proposed_tests/    tests the model proposed, kept append-only
  .git/              one commit per iteration
"""

from __future__ import annotations

import contextlib
import re
import secrets
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from envport.errors import EnvportError
from envport.io.lock import FileLock
from envport.io.scratch import remove_tree
from envport.runs import harness
from envport.runs.history import History
from envport.runs.state import RunState, load_state, save_state
from envport.spec import SPEC_FILENAME
from envport.variant import frozen_text


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


class RunLock(FileLock):
    """One process drives a run at a time (`run.lock`, held by the kernel: envport.io.lock)."""

    subject = "the run"

    def __init__(self, root: Path) -> None:
        super().__init__(root / "run.lock")

    def busy(self, holder: int | None) -> str:
        who = f"process {holder}" if holder else "another process"
        return f"{self.path.parent}: {who} is driving this run; wait for it or stop it"


def new_run_id(spec_name: str, target: str) -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    name = re.sub(r"[^A-Za-z0-9_-]+", "-", spec_name).strip("-") or "run"
    return f"{name}-{target}-{stamp}-{secrets.token_hex(2)}"


def _freeze_harness_files(spec_file: Path, root: Path) -> None:
    """Copy the harness files the spec names by relative path (L1 probes, a stochastic env's
    noise harness) next to the copy, read-only and hashed (`envport.runs.harness`).

    The frozen spec keeps its text, so a relative path in it must resolve in the run too. A
    variant's files may be its base's (envport.variant): they are copied all the same, and
    the copy's `base` line is a comment, so the run never reads the examples folder again.
    """
    from envport.spec import load_spec

    spec = load_spec(spec_file)
    named = [getattr(target, "probes", None) for target in spec.targets.values()]
    if spec.randomness is not None:
        named.append(spec.randomness.harness)
    named.append(spec.reference.rules)  # a black-box spec's rules document
    named.append(spec.state.helpers)  # functions `state.valid` calls
    # A reference factory, state bridge, L3 policy or book of start states (`[state.reached]
    # book`) given as a file beside the spec (`x.py:function`).
    reached = spec.state.reached
    book = reached.book if reached is not None else None
    moves = spec.game.moves if spec.game is not None else None  # a game's move names
    files = (
        spec.reference.entry,
        spec.state.read,
        spec.state.write,
        spec.levels.l3.policy,
        book,
        moves,
    )
    for target in files:
        module = (target or "").partition(":")[0]
        named.append(module if module.endswith(".py") else None)
    # A harness module loads its siblings (Crafter's probe renders with harness/image.py
    # beside the named harness/reference.py): each named file's folder goes whole, its
    # Python files.
    siblings = []
    for relative in named:
        if relative and not Path(relative).is_absolute() and relative.endswith(".py"):
            folder = spec.harness_file(relative).parent
            siblings += [str(Path(relative).parent / f.name) for f in sorted(folder.glob("*.py"))]
    frozen: list[Path] = []
    for relative in dict.fromkeys([*named, *siblings]):
        if not relative or Path(relative).is_absolute():
            continue
        source = spec.harness_file(relative)
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
        text = spec_file.read_text(encoding="utf-8")
        if frozen_text(text) != text:  # a variant's: its `base` line becomes a comment
            run.spec_file.write_text(frozen_text(text), encoding="utf-8")
        _freeze_harness_files(spec_file, root)
        run.port.mkdir()
        run.reports.mkdir()
        history = History.create(root)
        state.head = history.commit(f"start {state.spec_name} -> {state.target}")
        run.save(state)
    except BaseException:
        # Interrupted (or failed) before run.json: nothing was asked yet, so a half-made
        # directory is only in the way of running the command again.
        with contextlib.suppress(OSError):
            remove_tree(root)
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
