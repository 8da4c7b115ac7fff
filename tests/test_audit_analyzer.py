"""Behaviours of the analyzer the corpus does not pin down line by line."""

from __future__ import annotations

import ast
import textwrap

import pytest

from envport.audit import Finding, audit_source
from envport.audit.scanner import is_trivial_payload


def findings(source: str) -> list[Finding]:
    return audit_source(textwrap.dedent(source), "env.py")


def calls(source: str) -> list[tuple[int, str, str]]:
    return [(f.line, f.severity.value, f.call) for f in findings(source)]


def test_module_and_submodule_aliases_resolve() -> None:
    source = """
        import os.path as osp
        from os import path
        import subprocess as sp

        async def f(p):
            osp.exists(p)
            path.isdir(p)
            sp.check_call(["true"])
    """
    assert calls(source) == [
        (7, "low", "os.path.exists"),
        (8, "low", "os.path.isdir"),
        (9, "critical", "subprocess.check_call"),
    ]


def test_columns_count_characters_not_bytes() -> None:
    # "é" is two UTF-8 bytes: ast's byte offset would put the call one column late.
    (finding,) = findings('import time\n\nasync def f():\n    x = "é"; time.sleep(1)\n')
    assert (finding.line, finding.col) == (4, 14)
    assert (finding.end_line, finding.end_col) == (4, 27)


def test_allow_comment_on_last_line_of_a_call_and_not_in_strings() -> None:
    source = """
        import time

        async def f():
            time.sleep(
                1
            )  # envport: allow-blocking
            print("# envport: allow-blocking"); time.sleep(2)
    """
    assert calls(source) == [(8, "critical", "time.sleep")]


def test_recursive_helpers_terminate_and_report_once() -> None:
    source = """
        import time

        def ping(n):
            time.sleep(n)
            return pong(n - 1)

        def pong(n):
            return ping(n) if n else 0

        async def a():
            ping(3)

        async def b():
            pong(3)
    """
    (finding,) = findings(source)
    assert finding.line == 5
    assert [step.function for step in finding.chain] == ["a", "ping"]


def test_suppressed_helper_call_is_not_followed_but_other_callers_are() -> None:
    source = """
        import time

        def warm():
            time.sleep(1)

        async def start():
            warm()  # envport: allow-blocking

        async def step():
            warm()
    """
    (finding,) = findings(source)
    assert [(step.function, step.line) for step in finding.chain] == [("step", 10), ("warm", 11)]
    assert "`await asyncio.to_thread(warm, ...)`" in finding.fix
    assert "line 11" in finding.fix


def test_offloaded_method_is_not_followed() -> None:
    source = """
        import asyncio, time

        class Env:
            def _step(self):
                time.sleep(1)

            async def step(self):
                loop = asyncio.get_running_loop()
                await loop.run_in_executor(None, self._step)
                return await asyncio.to_thread(self._step)
    """
    assert findings(source) == []


def test_name_bound_to_different_kinds_is_untyped() -> None:
    source = """
        from pathlib import Path

        async def f(x):
            p = Path(x)
            p.unlink()
            q = Path(x)
            q = x.lower()
            q.unlink()
    """
    assert calls(source) == [(6, "high", "Path.unlink")]


def test_class_attribute_annotation_types_self_attribute() -> None:
    source = """
        from pathlib import Path
        from typing import Optional

        import httpx


        class Remote:
            client: httpx.Client
            files: list[Path]
            log: Optional[Path]

            def __init__(self, client, files, log):
                self.client = client
                self.files = files
                self.log = log

            async def step(self):
                self.files.replace(0, 1)
                self.log.touch()
                return self.client.post("/step")
    """
    assert calls(source) == [(20, "high", "Path.touch"), (21, "critical", "httpx.Client.post")]


def test_blocking_in_sync_method_not_reached_from_async_is_silent() -> None:
    source = """
        import time

        class Env:
            def close(self):
                time.sleep(1)

            async def step(self):
                return 1
    """
    assert findings(source) == []


def test_syntax_error_propagates_from_audit_source() -> None:
    with pytest.raises(SyntaxError):
        audit_source("async def f(:\n", "bad.py")


@pytest.mark.parametrize(
    ("payload", "trivial"),
    [
        ("'text'", True),
        ("-1", True),
        ("{'a': [1, 2, (3, None)]}", True),
        ("{**extra}", False),
        ("obs", False),
        ("{'obs': obs}", False),
        ("f'{obs}'", False),
        ("state.model_dump()", False),
    ],
)
def test_trivial_payload_heuristic(payload: str, trivial: bool) -> None:
    expression = ast.parse(payload, mode="eval").body
    assert is_trivial_payload(expression) is trivial


def test_findings_carry_rule_fix_and_message() -> None:
    (finding,) = findings("import time\n\nasync def f():\n    time.sleep(1)\n")
    assert finding.rule == "blocking-sleep"
    assert finding.fix == "use `await asyncio.sleep(...)`"
    assert finding.message == "`time.sleep` sleeps on the event loop thread"
    assert finding.entry_point == "f"
