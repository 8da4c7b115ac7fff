"""How a command's process ends (envport/exits.py)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

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
