"""The HTML page of one `envport verify` (issue 46): `verify --html FILE` and `envport report
VERIFY.json` write the page a translate run has for its check, for a verify alone, so the grid
pictures that make a MinAtar divergence readable are there without a run. Read in headless
Chromium, as a user opens it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from test_report import browser, check_self_contained  # noqa: F401  (browser: a fixture)

from envport.verifiers.selfcheck import apply_mutant, load_mutants

from helpers import ROOT, run_envport, user_env

BREAKOUT = ROOT / "examples" / "minatar_breakout"
# The trail's row is the ball's new row: L1's transition draws it in its first examples, and
# the screen (a grid of planes, rows first) differs in two cells of its `trail` plane.
TRAIL = next(m for m in load_mutants(BREAKOUT) if m.id == "numpy-trail-at-new-cell")


def _verified(tmp_path: Path) -> tuple[Path, Path]:
    port = apply_mutant(TRAIL, BREAKOUT / "ports" / "numpy", tmp_path / "port")
    page, report = tmp_path / "pages" / "verify.html", tmp_path / "verify.json"
    done = run_envport(
        "verify",
        str(BREAKOUT),
        "--port",
        str(port),
        "--target",
        "numpy",
        "--levels",
        "l1",
        "--examples",
        "30",
        "--no-shrink",
        "--html",
        str(page),
        "--json",
        str(report),
        env=user_env(),
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "obs[2][8].trail: expected set, got clear" in done.stdout, done.stdout
    return page, report


def _without_date(html: str) -> str:
    return re.sub(r"Written by envport on [^<]* from", "", html)


@pytest.mark.slow
def test_a_verify_page_draws_the_grids_of_a_minatar_divergence(
    browser: Any,  # noqa: F811
    tmp_path: Path,
) -> None:
    page, report = _verified(tmp_path)
    html = page.read_text()
    check_self_contained(html)
    browser.get(page.as_uri())
    facts = browser.execute_script(
        """
        const cells = side => [...document.querySelectorAll(`table.grid.${side} td`)];
        const differs = [...document.querySelectorAll('table.grid.port td.differs')];
        return {
          verdict: document.querySelector('#verdict').textContent,
          checks: [...document.querySelectorAll('#checks tr')].map(r => r.innerText),
          pairs: [...document.querySelectorAll('.grid-pair')].map(p => p.dataset.field),
          reference: cells('reference').length,
          port: cells('port').length,
          differs: differs.map(td => td.title),
          outlined: differs.filter(td => getComputedStyle(td).outlineStyle === 'solid').length,
          drawn: differs.filter(td => td.offsetWidth >= 20 && td.offsetHeight >= 20).length,
          texts: [...document.querySelectorAll('.divergence pre')].map(p => p.textContent),
          scripts: document.scripts.length,
        };
        """
    )
    assert browser.get_log("browser") == [] or all(
        entry.get("level") != "SEVERE" for entry in browser.get_log("browser")
    )
    assert facts["verdict"] == "DIVERGED" and facts["scripts"] == 0
    assert any(row.startswith("FAIL\tl1.transition") for row in facts["checks"]), facts["checks"]
    assert any(row.startswith("pass\tl1.view.observe") for row in facts["checks"]), facts
    # Both screens of the 10x10 board, side by side; on the port's the two cells of the trail
    # marked: the trail drawn on the ball's new row, missing from the row it left.
    assert "obs" in facts["pairs"], facts["pairs"]
    assert facts["reference"] >= 100 and facts["port"] == facts["reference"]
    assert set(facts["differs"]) == {"obs[2][8] = brick", "obs[3][8] = trail, brick"}, facts
    assert facts["outlined"] == facts["drawn"] == len(facts["differs"])
    transition = next(text for text in facts["texts"] if text.startswith("L1 transition"))
    assert "replay: envport verify" in transition and "--module env" in transition

    # `envport report VERIFY.json`: the same page, from the file --json wrote.
    again = run_envport("report", str(report), env=user_env())
    assert again.returncode == 0, again.stderr
    written = report.with_suffix(".html")
    assert again.stdout.strip() == str(written)
    assert _without_date(written.read_text()) == _without_date(html)


def test_report_of_a_file_that_is_not_a_verify_report_is_one_line(tmp_path: Path) -> None:
    other = tmp_path / "run.json"
    other.write_text(json.dumps({"run_id": "x"}))
    done = run_envport("report", str(other), env=user_env())
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert "not what `envport verify --json` writes" in line, line
