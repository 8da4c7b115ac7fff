"""What a user reads about a finished run: the closing lines of translate (repeated by
`envport resume` on a finished run), and what to do when a run gave up."""

from __future__ import annotations

import json
from pathlib import Path

from run_fixtures import bare_run, envport


def finish(run: Path, status: str, reason: str) -> None:
    state = json.loads((run / "run.json").read_text())
    state.update(status=status, reason=reason, phase="done")
    (run / "run.json").write_text(json.dumps(state))


def labelled(stdout: str) -> dict[str, str]:
    rows = {}
    for line in stdout.splitlines():
        label, _, where = line.strip().partition(": ")
        if line.startswith("  ") and where:
            rows[label] = where.strip()
    return rows


def test_the_report_is_the_html_page(tmp_path: Path) -> None:
    run = bare_run(tmp_path / "runs")
    finish(run, "verified", "every level passes")
    assert envport("report", str(run)).returncode == 0
    (run / "reports" / "verify.json").write_text("{}")
    done = envport("resume", str(run))
    assert done.returncode == 0, done.stdout + done.stderr
    rows = labelled(done.stdout)
    assert rows["report"] == str(run / "reports" / "report.html")
    assert rows["checks"] == str(run / "reports" / "verify.json")
    assert rows["port"] == str(run / "port")
    assert rows["review"] == f"envport review {run}"
    assert not any(
        where.endswith("verify.json") for label, where in rows.items() if label != "checks"
    )


def test_a_run_that_gave_up_says_how_to_go_on(tmp_path: Path) -> None:
    run = bare_run(tmp_path / "runs")
    finish(run, "gave_up", "iteration budget")
    done = envport("resume", str(run))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "raise a budget (--max-iterations" in done.stdout
    assert f"or edit {run / 'port'} by hand and check it: envport verify {run} --port" in (
        " ".join(done.stdout.split())
    )
