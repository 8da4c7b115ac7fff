"""The HTML run report: written at the end of every run and by `envport report`, one
self-contained file, every transcript value escaped; opened in headless Chromium.

Two real runs: the quickstart (`envport translate examples/cartpole --target jax`, offline
replay; L1 catches its truncation bug in one transition) and the drift session of
run_fixtures (free-running L3 catches a drift over an episode, plotted over the steps).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

from envport.report import write_report_quietly
from envport.runs.events import CheckEvent, read_events

from helpers import ROOT
from run_fixtures import envport, translate_drift_run

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,1000",
)


@pytest.fixture(scope="module")
def quickstart(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("quickstart")
    result = envport("translate", "examples/cartpole", "--target", "jax", "--out", str(out))
    assert result.returncode == 0, result.stdout + result.stderr
    (run,) = [p for p in out.iterdir() if p.is_dir()]
    assert f"report:     {run / 'reports' / 'report.html'}" in result.stdout
    return run


@pytest.fixture(scope="module")
def drift(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return translate_drift_run(tmp_path_factory.mktemp("drift"))


def report_of(run: Path) -> Path:
    result = envport("report", str(run))
    assert result.returncode == 0, result.stderr
    path = run / "reports" / "report.html"
    assert result.stdout.strip() == str(path)
    return path


def check_self_contained(html: str) -> None:
    assert "<script" not in html.lower()
    # Nothing fetched: no external URL in any src, href or CSS url().
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", html, re.I)
    assert "url(" not in html
    assert "Content-Security-Policy" in html and "default-src 'none'" in html


@pytest.mark.slow
def test_the_drift_report_shows_every_iteration_escaped(drift: Path) -> None:
    written_at_the_end = (drift / "reports" / "report.html").read_text()
    html = report_of(drift).read_text()
    assert 'id="timeline"' in written_at_the_end
    check_self_contained(html)
    # The model's markup is text on the page, its terminal escape made visible.
    assert "&lt;script&gt;document.title=&#34;pwned&#34;&lt;/script&gt;" in html
    assert "onerror=" not in html.replace("onerror=&#34;", "")
    assert "\x1b" not in html and "\\x1b]0;retitled" in html
    # Timeline, a diff, the over-the-steps divergence plot, cost per iteration and in total.
    assert len(re.findall(r'<li class="(pass|fail|none)"><a href="#iter-\d+">', html)) == 4
    assert '<span class="del">-GRAVITY = 9.801</span>' in html
    assert '<span class="add">+GRAVITY = 9.8</span>' in html
    plots = re.findall(r'class="plot divergence-plot"[^>]*src="data:image/svg\+xml;base64,', html)
    assert plots, "no divergence plot"
    assert "<th>total</th>" in html and "No tokens and no dollars" in html
    assert "L3 free, episode" in html and "obs.theta_dot" in html


@pytest.mark.slow
def test_l3_divergences_keep_the_failing_field_over_the_steps(drift: Path) -> None:
    checks = [e for e in read_events(drift / "transcript.jsonl") if isinstance(e, CheckEvent)]
    failed = next(c for c in checks if not c.passed)
    (level,) = [lv for lv in failed.levels if lv["divergences"] and lv["level"] == "l3"][:1]
    divergence = level["divergences"][0]
    (series,) = divergence["series"]
    assert level["level"] == "l3" and series["field"] == "obs.theta_dot"
    step, first = divergence["step"], series["first_step"]
    assert len(series["reference"]) == len(series["port"]) > step - first
    # At the first divergent step the series holds the values the divergence names.
    (diff,) = divergence["fields"]
    assert series["reference"][step - first] == pytest.approx(diff["expected"])
    assert series["port"][step - first] == pytest.approx(diff["actual"])
    assert series["port"][0] == pytest.approx(series["reference"][0], abs=1e-4)


@pytest.mark.slow
def test_bench_results_appear_when_a_bench_ran(drift: Path, tmp_path: Path) -> None:
    bench = drift / "reports" / "bench.json"
    other = drift / "reports" / "bench-other.json"  # a name that matches, another format
    shutil.copyfile(ROOT / "benchmarks" / "results" / "sps.json", bench)
    other.write_text('{"comparisons": []}')
    try:
        html = report_of(drift).read_text()
        named = envport("report", str(drift), "--bench", str(other))
    finally:
        bench.unlink()
        other.unlink()
    assert named.returncode == 2 and "not an `envport bench --json` result" in named.stderr
    rows = json.loads((ROOT / "benchmarks" / "results" / "sps.json").read_text())["rows"]
    assert '<h2 id="bench">Steps per second</h2>' in html and html.count('class="bench"') == 1
    for batch in sorted({row["batch"] for row in rows}):
        assert f"B={batch}</th>" in html
    assert 'alt="steps per second by batch size"' in html
    # A bench file named on the command line is included too; a missing one is an error.
    missing = envport("report", str(drift), "--bench", str(tmp_path / "none.json"))
    assert missing.returncode == 2 and "--bench" in missing.stderr


def test_a_report_that_cannot_be_written_never_fails_the_run(tmp_path: Path) -> None:
    (tmp_path / "run.json").write_text("{not json")
    assert write_report_quietly(tmp_path) is None
    not_a_run = envport("report", str(tmp_path / "nowhere"))
    assert not_a_run.returncode == 2 and len(not_a_run.stderr.strip().splitlines()) == 1


# --- in a real browser -----------------------------------------------------------------------


def chromium_or_skip() -> tuple[str, str]:
    """Chromium and chromedriver; outside CI their absence skips, in CI it fails."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    try:
        import selenium  # noqa: F401
    except ImportError:
        selenium_missing = "selenium is not installed (pip install -e '.[dev]')"
    else:
        selenium_missing = ""
    missing = selenium_missing or (
        "" if browser and driver else "chromium or chromedriver is not installed"
    )
    if missing:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must run the browser test: {missing} (.ci/run installs them)")
        pytest.skip(f"{missing}: apt-get install chromium chromium-driver")
    assert browser and driver
    return browser, driver


@pytest.fixture
def browser(tmp_path: Path) -> Any:
    browser_path, driver_path = chromium_or_skip()
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = browser_path
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    # A fresh profile: nothing from an earlier run, no first-run work (the network is shut).
    options.add_argument(f"--user-data-dir={tempfile.mkdtemp(dir=tmp_path)}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # An explicit driver path keeps Selenium Manager from looking for one on the network.
    driver = webdriver.Chrome(options=options, service=Service(executable_path=driver_path))
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


def open_report(driver: Any, path: Path, screenshot: Path) -> dict[str, Any]:
    driver.get(path.as_uri())
    facts = driver.execute_script(
        """
        const plots = [...document.querySelectorAll('img.divergence-plot')];
        const diffs = [...document.querySelectorAll('pre.diff')].filter(p => p.offsetHeight > 0);
        return {
          timeline: document.querySelectorAll('#timeline li').length,
          visibleDiffs: diffs.length,
          diffLines: document.querySelectorAll('pre.diff span.add, pre.diff span.del').length,
          plots: plots.length,
          plotsDrawn: plots.filter(i => i.complete && i.naturalWidth > 100).length,
          scripts: document.scripts.length,
          title: document.title,
          height: document.documentElement.scrollHeight,
        };
        """
    )
    # One tall window: the whole page, timeline to plots, in one screenshot.
    driver.set_window_size(1280, min(int(facts["height"]) + 40, 9000))
    driver.save_screenshot(str(screenshot))
    facts["console"] = [
        entry for entry in driver.get_log("browser") if entry.get("level") == "SEVERE"
    ]
    return facts


@pytest.mark.slow
def test_the_quickstart_report_in_headless_chromium(
    browser: Any, quickstart: Path, drift: Path, tmp_path: Path
) -> None:
    page = report_of(quickstart)
    check_self_contained(page.read_text())
    shot = tmp_path / "quickstart-report.png"
    facts = open_report(browser, page, shot)
    assert facts["console"] == [], facts["console"]
    assert facts["timeline"] == 4  # generate physics, generate env, repair env, whole port
    assert facts["visibleDiffs"] >= 1 and facts["diffLines"] > 0
    # The session's truncation bug, caught by L1 in one transition: two values, which the
    # divergence's lines give; a chart is drawn only for a series of steps (the drift's).
    assert facts["plots"] == 0
    assert facts["scripts"] == 0
    assert shot.stat().st_size > 50_000

    drift_shot = tmp_path / "drift-report.png"
    facts = open_report(browser, report_of(drift), drift_shot)
    assert facts["console"] == [], facts["console"]
    assert facts["timeline"] == 4 and facts["plots"] >= 1
    assert facts["plotsDrawn"] == facts["plots"]
    # The answer's <script> and onerror are text: nothing ran.
    assert facts["scripts"] == 0 and facts["title"].startswith("envport run ")
    keep = os.environ.get("ENVPORT_KEEP_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        for image in (shot, drift_shot):
            shutil.copyfile(image, Path(keep) / image.name)


@pytest.mark.slow
def test_the_report_shows_the_references_branch_coverage(quickstart: Path) -> None:
    """The whole port's check: the figure, and the reference's source with lines marked."""
    html = report_of(quickstart).read_text()
    assert "reference branch coverage: " in html and "branch exits of the reference" in html
    assert "gymnasium/envs/classic_control/cartpole.py" in html
    assert re.search(r'<span class="add" title="run">\s*\d+\s+if not terminated:', html)
    # Rendering is out of scope, with its reason, not a gap.
    assert "rendering, not part of the transition" in html
    # The run's transcript keeps the figure with the check, for reports made later.
    checks = [e for e in read_events(quickstart / "transcript.jsonl") if isinstance(e, CheckEvent)]
    assert checks[-1].coverage is not None and checks[-1].coverage["total"] > 0
