"""The start of the plain interpreter's check: a worker's limits, then a fresh interpreter.

Run inside the sandbox (`python -m envport.serve.plain_start LIMITS`): it sets the limits
every worker has (address space, open files, no core dumps, CPU seconds, here for the
whole replay), installs the seccomp filter that refuses new processes (`no_fork`), writes
the runner (`plain_replay`) into its working directory as `main.py`, and replaces itself
with `python main.py` (execve). Resource limits and a seccomp filter outlive execve;
nothing of envport does. So the port runs under a worker's limits in an interpreter that
has loaded none of envport's modules, started as a user starts a script: no arguments, a
working directory holding that script alone, the worker's environment.
"""

from __future__ import annotations

import os
import resource
import sys
from pathlib import Path

from envport.serve import no_fork, sandbox

# The runner's name in the working directory: what a user's script is often called.
SCRIPT = "main.py"


def main() -> None:
    limits = sandbox.Limits.model_validate_json(sys.argv[1])
    sandbox.apply_process_limits(limits)
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    seconds = limits.cpu_seconds_per_request
    if hard != resource.RLIM_INFINITY:
        seconds = min(seconds, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (seconds, hard))
    # Read as a file, not imported: the runner imports NumPy, which this process need not.
    Path(SCRIPT).write_bytes(Path(__file__).with_name("plain_replay.py").read_bytes())
    # As in a worker (its `load` answer says so), a machine without a filter runs without.
    no_fork.refuse_new_processes()
    os.execv(sys.executable, [sys.executable, SCRIPT])


if __name__ == "__main__":
    main()
