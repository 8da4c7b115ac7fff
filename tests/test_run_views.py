"""The run views agree with each other and with what happened (issue 46): a repair that
repeated a file unchanged reads "no change" (not an open empty diff), `review --iteration K`
and `verify --port RUN@K` name the same iterations, and exploration's line does not read as
a contradiction of the coverage line above it. On a run written before (tests/fixtures/run_v1),
through the real command line."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

from transcript_fixture import copy_run

from envport.runs.events import append_event, make_event
from envport.verifiers.explore import found

from helpers import run_envport, user_env

# Its last iteration is step 3; the step after it holds only a decision and the finish.
RUN = "cartpole-numpy-20261124-204058-45f3"


def test_a_file_the_answer_repeated_unchanged_reads_no_change(tmp_path: Path) -> None:
    run = copy_run(RUN, tmp_path)
    # As the recorder journals an answer's file that is byte for byte the port's own.
    repeated = make_event(
        "edit", at=datetime.now(UTC), step=2, path="physics.py", created=False, diff=""
    )
    append_event(run / "transcript.jsonl", repeated)

    shown = run_envport("review", str(run), "--iteration", "2", env=user_env())
    assert shown.returncode == 0, shown.stderr
    assert "diff physics.py (no change)" in shown.stdout, shown.stdout
    assert "diff physics.py (changed)" not in shown.stdout

    written = run_envport("report", str(run), "--out", str(tmp_path / "page.html"), env=user_env())
    assert written.returncode == 0, written.stderr
    page = (tmp_path / "page.html").read_text()
    assert "diff physics.py: no change" in page
    assert "+0 -0" not in page
    # Every diff left open on the page has lines to show.
    for body in re.findall(
        r'<details class="diff" open>.*?<pre class="diff">(.*?)</pre>', page, re.S
    ):
        assert body.strip(), "an open diff with nothing in it"


def test_review_and_a_port_at_an_iteration_name_the_same_iterations(tmp_path: Path) -> None:
    run = copy_run(RUN, tmp_path)
    review = run_envport("review", str(run), "--iteration", "99", env=user_env())
    verify = run_envport("verify", str(run), "--port", f"{run}@99", env=user_env())
    ranges = []
    for done in (review, verify):
        assert done.returncode == 2, done.stdout + done.stderr
        (line,) = done.stderr.strip().splitlines()
        ranges += re.findall(r"this run has (\S+)\)", line)
    assert ranges == ["0..3", "0..3"], (review.stderr, verify.stderr)
    # The step after the last iteration (its decision and the finish) is no iteration.
    at_four = run_envport("verify", str(run), "--port", f"{run}@4", env=user_env())
    assert at_four.returncode == 2 and "this run has 0..3" in at_four.stderr, at_four.stderr


def test_explorations_line_says_its_finds_are_in_the_coverage_figure() -> None:
    """After `coverage: 36 of 36 (100%)`, "1 rollouts took 2 arcs ... no level had" read as
    branches still missing; they are the ones exploration added, counted in that figure."""
    one = found(1, 2)
    assert one.startswith("1 rollout took 2 branch exits") and "counted in the coverage" in one
    assert found(3, 1).startswith("3 rollouts took 1 branch exit of")
    assert "no level had" not in one and "rollouts" not in one
    assert found(0, 0).startswith("no rollout took")
