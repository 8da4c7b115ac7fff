"""What `envport review` and `envport report` show for the transcript fixtures: runs made by
an earlier envport and checked in under tests/fixtures/run_v1/ (see its README.md).

`outputs` runs both commands in-process on a copy of a fixture run and returns their text
with the copy's path written as `{RUN}` and the report's clock line removed, so the figures
recorded from the code that wrote the fixture can be compared with today's, line for line.
`python tests/transcript_fixture.py` records them (into tests/fixtures/run_v1/expected/).
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
import sys
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures" / "run_v1"
EXPECTED = FIXTURES / "expected"
RUNS = sorted(p.name for p in FIXTURES.iterdir() if (p / "run.json").is_file())
_GENERATED = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC")


def copy_run(name: str, into: Path) -> Path:
    """A writable copy of fixture `name`, under its own name (replay lines match it)."""
    target = into / name
    shutil.copytree(FIXTURES / name, target)
    return target


def _cli(argv: list[str]) -> str:
    from envport.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    assert code == 0, (argv, code, err.getvalue())
    return out.getvalue()


def outputs(run: Path) -> dict[str, str]:
    """File name -> text: the review overview, every iteration in full, and the report."""
    steps = sorted(
        {
            int(record["step"])
            for line in (run / "transcript.jsonl").read_text(encoding="utf-8").splitlines()
            if "step" in (record := json.loads(line))
        }
    )
    shown: dict[str, str] = {"review.txt": _cli(["review", str(run)])}
    for step in steps:
        with contextlib.suppress(AssertionError):  # a step folded into the one before it
            shown[f"review-{step}.txt"] = _cli(["review", str(run), "--iteration", str(step)])
    shown["review-0-full.txt"] = _cli(["review", str(run), "--iteration", "0", "--full"])
    report = run / "report.html"
    _cli(["report", str(run), "--out", str(report)])
    shown["report.html"] = _GENERATED.sub("{GENERATED}", report.read_text(encoding="utf-8"))
    report.unlink()
    return {name: text.replace(str(run), "{RUN}") for name, text in shown.items()}


def record(scratch: Path) -> None:
    for name in RUNS:
        for file, text in outputs(copy_run(name, scratch)).items():
            target = EXPECTED / name / file
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    import tempfile

    sys.path.insert(0, str(Path(__file__).parent))
    with tempfile.TemporaryDirectory() as scratch:
        record(Path(scratch))
