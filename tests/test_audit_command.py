"""`envport audit` as a command: exit codes, output formats, usage errors, self-audit."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

import envport
from envport.audit.command import add_parser

from helpers import user_env

CORPUS = Path(__file__).parent / "audit_corpus"
PACKAGE = Path(envport.__file__).parent


def audit(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser(prog="envport")
    add_parser(parser.add_subparsers())
    args = parser.parse_args(["audit", *argv])
    code = args.func(args)
    out, err = capsys.readouterr()
    return code, out, err


def write(path: Path, source: str) -> Path:
    path.write_text(source, encoding="utf-8")
    return path


def test_project_code_passes_its_own_audit_at_high(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = audit(capsys, str(PACKAGE), "--fail-on", "high")
    assert code == 0, out
    assert err == ""
    assert "envport audit:" in out.splitlines()[-1]


def test_syntax_error_is_one_line_naming_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = write(tmp_path / "broken.py", "async def step(:\n    pass\n")
    code, out, err = audit(capsys, str(broken))
    assert code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"envport audit: {broken}:1:")
    assert "syntax error" in lines[0]
    assert "Traceback" not in err


def test_missing_path_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = audit(capsys, str(tmp_path / "nope.py"))
    assert code == 2
    assert err.strip() == f"envport audit: {tmp_path / 'nope.py'}: no such file or directory"


def test_undecodable_file_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "latin.py"
    bad.write_bytes(b"x = 1\ny = '\xff'\n")
    code, _, err = audit(capsys, str(bad))
    assert code == 2
    assert err.count("\n") == 1 and f"{bad}:2:" in err


@pytest.mark.parametrize(
    ("fail_on", "expected"),
    [("critical", 0), ("high", 0), ("medium", 1), ("low", 1)],
)
def test_fail_on_threshold(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fail_on: str, expected: int
) -> None:
    # One medium finding: fails at medium and below only.
    source = write(tmp_path / "env.py", "async def f(src):\n    return compile(src, 'x', 'exec')\n")
    code, out, _ = audit(capsys, str(source), "--fail-on", fail_on)
    assert code == expected
    assert f"{source}:2:12: medium compile [dynamic-code]" in out


def test_default_fail_on_fails_on_any_finding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write(tmp_path / "env.py", "import os\n\nasync def f(p):\n    return os.stat(p)\n")
    code, out, _ = audit(capsys, str(source))
    assert code == 1
    assert "low os.stat" in out


def test_clean_code_exits_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = write(
        tmp_path / "env.py", "import asyncio\n\nasync def f():\n    await asyncio.sleep(1)\n"
    )
    code, out, _ = audit(capsys, str(source))
    assert code == 0
    assert out.strip() == "envport audit: no blocking calls found in 1 file"


def test_json_format_lists_findings_and_summary(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = audit(
        capsys,
        str(CORPUS / "tp_helper_chain.py"),
        str(CORPUS / "tp_time_sleep.py"),
        "--format",
        "json",
    )
    document = json.loads(out)
    assert code == 1
    assert document["summary"] == {
        "files_scanned": 2,
        "findings": 2,
        "by_severity": {"critical": 1, "high": 1, "medium": 0, "low": 0},
        "fail_on": "low",
        "failed": True,
    }
    chained = next(f for f in document["findings"] if f["call"] == "json.dumps")
    assert [step["function"] for step in chained["chain"]] == ["Env.step", "Env._render", "_encode"]
    assert (chained["line"], chained["col"], chained["severity"]) == (6, 12, "high")
    assert "asyncio.to_thread(self._render, ...)" in chained["fix"]


def test_output_file_gets_the_report_and_stdout_stays_empty(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "audit.sarif"
    code, out, err = audit(
        capsys, str(CORPUS / "tp_time_sleep.py"), "--format", "sarif", "--output", str(target)
    )
    assert code == 1
    assert out == ""
    assert json.loads(target.read_text(encoding="utf-8"))["version"] == "2.1.0"
    assert "1 finding" in err


def test_unwritable_output_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "missing-dir" / "audit.json"
    code, _, err = audit(capsys, str(CORPUS / "tn_to_thread.py"), "--output", str(target))
    assert code == 2
    assert err.count("\n") == 1 and "cannot write report" in err


def test_directories_skip_hidden_and_cache_dirs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocking = "import time\n\nasync def f():\n    time.sleep(1)\n"
    for hidden in (".venv/lib", "__pycache__", "pkg/.tox"):
        (tmp_path / hidden).mkdir(parents=True)
        write(tmp_path / hidden / "x.py", blocking)
    write(tmp_path / "pkg" / "env.py", blocking)
    code, out, _ = audit(
        capsys, str(tmp_path), str(tmp_path / "pkg" / "env.py"), "--format", "json"
    )
    document = json.loads(out)
    assert code == 1
    assert document["summary"]["files_scanned"] == 1
    assert [Path(f["path"]).name for f in document["findings"]] == ["env.py"]


def test_python_dash_m_envport_audit_when_the_cli_wires_it() -> None:
    probe = subprocess.run(
        [sys.executable, "-m", "envport", "audit", "--help"],
        capture_output=True,
        text=True,
        env=user_env(),
    )
    if probe.returncode != 0 or "--fail-on" not in probe.stdout:
        pytest.skip("envport/cli.py does not register `audit` yet")
    result = subprocess.run(
        [sys.executable, "-m", "envport", "audit", str(PACKAGE), "--fail-on", "high"],
        capture_output=True,
        text=True,
        env=user_env(),
    )
    assert result.returncode == 0, result.stdout + result.stderr
