"""What a user reads about a finished run: the closing lines of translate (repeated by
`envport resume` on a finished run), and what to do when a run gave up."""

from __future__ import annotations

import json
import re
from pathlib import Path

from fake_api import FakeAPI, ServerError, Status
from helpers import CARTPOLE
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


def test_each_retry_of_a_model_call_is_shown(tmp_path: Path) -> None:
    """A gateway timeout and a wait: the plain progress says so at once, with the status,
    the attempt and the wait, instead of printing nothing until the call ends."""
    with FakeAPI() as api:
        api.script([ServerError(504), Status(404, "no such model")])
        done = envport(
            "translate", str(CARTPOLE), "--target", "numpy", "--model", "openai:fake-model",
            "--base-url", api.openai_base_url, "--out", str(tmp_path / "runs"),
        )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    retries = [line for line in done.stdout.splitlines() if "retrying in" in line]
    assert len(retries) == 1, done.stdout
    assert "model: openai:fake-model: HTTP 504" in retries[0]
    assert "(attempt 2 of 6)" in retries[0]
    assert re.search(r"retrying in \d+\.\ds", retries[0])
