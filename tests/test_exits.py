"""How a command's process ends (envport/exits.py)."""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap

import pytest

from helpers import user_env

# A process that leaves a reference cycle behind, as a verify leaves Hypothesis's examples
# and coverage's data: an object in the cycle says when the interpreter collects it.
PROGRAM = textwrap.dedent(
    """
    import sys
    from envport.exits import leave

    class Node:
        def __del__(self):
            print("collected at exit", flush=True)

    node = Node()
    node.self = node
    del node
    print("done", flush=True)
    sys.exit(leave({code}))
    """
)


def _run(code: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", PROGRAM.format(code=code)],
        capture_output=True,
        text=True,
        env=user_env(),
        timeout=120,
    )


def test_a_command_that_ends_normally_does_not_collect_its_heap_again() -> None:
    """The interpreter's last collections of everything a verify built took a quarter of a
    second of CartPole's verify; the process's end frees that memory anyway."""
    for code in (0, 1, 2):
        done = _run(code)
        assert done.returncode == code, done.stderr
        assert done.stdout == "done\n", done.stdout


def test_the_command_lines_process_collects_young_objects_in_large_batches() -> None:
    """A verify's millions of short-lived objects: at Python's default (700) the collector
    took a quarter of pgx Seaquest's CPU; a caller's own process keeps its setting."""
    probe = textwrap.dedent(
        """
        import atexit, gc, sys
        from envport.cli import main
        from envport.heap import YOUNG_THRESHOLD
        atexit.register(lambda: print(gc.get_threshold()[0], YOUNG_THRESHOLD))
        sys.argv = ["envport", "--help"]
        main()
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env=user_env(),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    threshold, wanted = done.stdout.split()[-2:]
    assert int(threshold) == int(wanted) > 700
    from envport.cli import main

    before = gc.get_threshold()
    try:
        gc.set_threshold(1234, 10, 10)
        with pytest.raises(SystemExit):
            main(["--help"])
        assert gc.get_threshold() == (1234, 10, 10)
    finally:
        gc.set_threshold(*before)
