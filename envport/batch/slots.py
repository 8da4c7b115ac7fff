"""Where each run of a batch lives, and what state it is in on disk.

    <out>/batch.json          the batch's own notes (errors of runs that never made a run dir)
    <out>/batch.lock          one batch process at a time drives these runs
    <out>/<run id>/           the run's slot, named by the batch file, stable across re-runs
        batch.log             what its translate/resume processes printed, appended
        <run-id>/             the run directory `envport translate --out <slot>` made

The slot is the stable part: the run directory inside it is found by its run.json, so the
batch needs no change to how translate names runs.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envport.errors import EnvportError
from envport.llm.cache import write_atomically
from envport.runs.journal import Spending
from envport.runs.layout import RunDir, RunLock
from envport.runs.state import RunState, load_state

MANIFEST = "batch.json"
LOG = "batch.log"


@dataclass(frozen=True)
class Slot:
    root: Path

    @property
    def log(self) -> Path:
        return self.root / LOG

    def run_dir(self) -> RunDir | None:
        """The run in this slot, if translate got as far as making one."""
        if not self.root.is_dir():
            return None
        runs = sorted(p for p in self.root.iterdir() if (p / "run.json").is_file())
        # Only ever one: a slot gets a fresh translate only while it holds no run.
        return RunDir(runs[-1]) if runs else None

    def clear_unfinished_start(self) -> None:
        """Remove what a translate killed before it saved run.json left behind.

        Such a directory has never asked a model anything (the run state is saved before
        the first call), so nothing paid is lost and a fresh start is exact.
        """
        if not self.root.is_dir():
            return
        for path in self.root.iterdir():
            if path.is_dir() and not (path / "run.json").exists():
                if (path / "transcript.jsonl").exists():
                    raise EnvportError(
                        f"{path}: a run with a transcript but no run.json; move it out of "
                        f"{self.root} and run the batch again"
                    )
                shutil.rmtree(path)

    def state(self) -> RunState | None:
        run = self.run_dir()
        if run is None:
            return None
        try:
            return load_state(run.state_file)
        except EnvportError:
            return None

    def spent_usd(self) -> float:
        """Dollars the run has paid, from its journal (the ledger of record, kill-proof)."""
        run = self.run_dir()
        return Spending.from_journal(run.transcript).cost_usd if run else 0.0


class BatchLock(RunLock):
    """One `envport batch` at a time on a runs directory (a killed one's lock is taken over)."""

    def __init__(self, out: Path) -> None:
        self.path = out / "batch.lock"

    def acquire(self) -> None:
        try:
            super().acquire()
        except EnvportError:
            raise EnvportError(
                f"{self.path.parent}: process {self._holder()} is running this batch; wait for "
                f"it or stop it (if no envport is running, delete {self.path})"
            ) from None


def read_manifest(out: Path) -> dict[str, Any]:
    try:
        data = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"runs": {}}
    return data if isinstance(data.get("runs"), dict) else {"runs": {}}


def write_manifest(out: Path, data: dict[str, Any]) -> None:
    write_atomically(out / MANIFEST, json.dumps(data, indent=2, sort_keys=True) + "\n")
