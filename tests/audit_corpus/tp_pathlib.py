"""pathlib I/O through a constructed path, a variable, an annotated parameter and self."""
from pathlib import Path


class RunDir:
    def __init__(self, root: Path, log=None):
        self.root = root
        self.log = Path(log) if log is not None else None

    async def write_state(self, text, scratch: Path):
        Path("run.json").write_text(text)  # expect: high Path.write_text
        journal = self.root / "journal"
        journal.mkdir(parents=True, exist_ok=True)  # expect: high Path.mkdir
        (journal / "old.jsonl").unlink(missing_ok=True)  # expect: high Path.unlink
        data = scratch.read_bytes()  # expect: high Path.read_bytes
        with self.log.open("a") as handle:  # expect: high Path.open
            handle.write(text)
        return data
