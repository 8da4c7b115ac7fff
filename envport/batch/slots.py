"""Where each run of a batch lives, and what state it is in on disk.

    <out>/batch.json          the batch's own notes (errors of runs that never made a run dir)
    <out>/batch.lock          one batch process at a time drives these runs
    <out>/<run id>/           the run directory (`envport translate --out <out> --run-id <id>`)
    <out>/<run id>.log        what its translate/resume processes printed, appended

The run's id, from the batch file, names its directory for good: one run, one name. A batch
directory written before that nested the run in a slot of the same name,
`<out>/<run id>/<run-id>/` beside `<out>/<run id>/batch.log`; such runs are still found,
logged and resumed where they are.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envport.errors import EnvportError
from envport.io import FileLock, write_atomically
from envport.io.scratch import remove_tree
from envport.runs.journal import Spending
from envport.runs.layout import RunDir
from envport.runs.state import RunState, load_state

MANIFEST = "batch.json"
LEGACY_LOG = "batch.log"  # inside a slot of the nested layout


@dataclass(frozen=True)
class Slot:
    """One run of the batch: its directory and its log, both named by the run's id."""

    out: Path
    id: str

    @property
    def root(self) -> Path:
        return self.out / self.id

    @property
    def log(self) -> Path:
        legacy = self.root / LEGACY_LOG
        return legacy if legacy.is_file() else self.out / f"{self.id}.log"

    def run_dir(self) -> RunDir | None:
        """The run, if translate got as far as making one."""
        if (self.root / "run.json").is_file():
            return RunDir(self.root)
        nested = self._nested()
        return RunDir(nested[-1]) if nested else None

    def _nested(self) -> list[Path]:
        if not (self.root / LEGACY_LOG).is_file():
            return []
        return sorted(p for p in self.root.iterdir() if (p / "run.json").is_file())

    def clear_unfinished_start(self) -> None:
        """Remove what a translate killed before it saved run.json left behind.

        Such a directory has never asked a model anything (the run state is saved before
        the first call), so nothing paid is lost and a fresh start is exact.
        """
        if not self.root.is_dir() or (self.root / "run.json").exists():
            return
        if not (self.root / LEGACY_LOG).is_file():
            _remove_unstarted(self.root)
            return
        for path in self.root.iterdir():
            if path.is_dir() and not (path / "run.json").exists():
                _remove_unstarted(path)
        if not self._nested():
            # A nested slot that never got its run: the fresh start uses the flat layout.
            with (self.out / f"{self.id}.log").open("ab") as log:
                log.write((self.root / LEGACY_LOG).read_bytes())
            remove_tree(self.root)

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


class BatchLock(FileLock):
    """One `envport batch` at a time on a runs directory (the kernel's lock, as a run's)."""

    subject = "the batch"

    def __init__(self, out: Path) -> None:
        super().__init__(out / "batch.lock")

    def busy(self, holder: int | None) -> str:
        who = f"process {holder}" if holder else "another process"
        return f"{self.path.parent}: {who} is running this batch; wait for it or stop it"


def _remove_unstarted(path: Path) -> None:
    if (path / "transcript.jsonl").exists():
        raise EnvportError(
            f"{path}: a run with a transcript but no run.json; move it out of "
            f"{path.parent} and run the batch again"
        )
    remove_tree(path)


def read_manifest(out: Path) -> dict[str, Any]:
    try:
        data = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"runs": {}}
    return data if isinstance(data.get("runs"), dict) else {"runs": {}}


def write_manifest(out: Path, data: dict[str, Any]) -> None:
    write_atomically(out / MANIFEST, json.dumps(data, indent=2, sort_keys=True) + "\n")
