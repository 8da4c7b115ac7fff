"""A batch's runs as Ray tasks (`envport batch --executor ray`), and its ledger as an actor.

Each run is one task that starts the same `python -m envport.batch.child` a local batch
starts, on whichever node Ray picks, with the same options on its stdin and its output
appended to the run's log: the run's own crash and kill safety carries over unchanged. The
run root must be a path every node reaches (a shared filesystem): the run directories, the
logs and the response caches inside the runs live there. A node needs what a local run
needs in its environment (the provider's API key): keys are never sent in a task.

`RayRun` stands where a local batch holds a `subprocess.Popen`: poll, signal, kill, wait.
The child dies with the Ray worker that started it (the kernel's parent-death signal), and
Ray ends a task whose driver died, so a killed batch leaves no run holding its lock; running
the batch again resumes each run from its last completed step, no paid call repeated.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from typing import Any

from envport.batch.child import PARENT_ENV
from envport.batch.money import Decision, Ledger
from envport.errors import EXIT_INTERRUPTED
from envport.serve.jail import UNSAFE_VARIABLE

# How long a run gets to save its state after the batch's stop, as locally.
STOP_GRACE_S = 30.0
# Exit code of a run whose task Ray lost (its node died, its worker was killed): a kill.
LOST = -signal.SIGKILL


def run_on_node(order: bytes, log_path: str, env: dict[str, str], cwd: str) -> int:
    """The task: one run's child process on this node, to its end; its exit code."""
    with open(log_path, "ab") as log:
        child = subprocess.Popen(
            [sys.executable, "-m", "envport.batch.child"],
            stdin=subprocess.PIPE,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, **env, "PYTHONUNBUFFERED": "1", PARENT_ENV: str(os.getpid())},
            cwd=cwd if os.path.isdir(cwd) else None,
            start_new_session=True,
        )
        assert child.stdin is not None
        try:
            child.stdin.write(order)
            child.stdin.close()
        except BrokenPipeError:
            pass
        try:
            return child.wait()
        except KeyboardInterrupt:
            # The batch was stopped (Ray cancels the task): the run saves its state and stops.
            child.send_signal(signal.SIGINT)
            try:
                return child.wait(timeout=STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                child.kill()
                return child.wait()


class RayRun:
    """One run's task, looked at as a local batch looks at a run's process."""

    def __init__(self, ray: Any, order: bytes, log_path: str) -> None:
        self._ray = ray
        env = {UNSAFE_VARIABLE: "1"} if os.environ.get(UNSAFE_VARIABLE) == "1" else {}
        task = ray.remote(run_on_node).options(num_cpus=1, max_retries=0)
        self._ref = task.remote(order, log_path, env, os.getcwd())
        # Typed as Popen's is: set once the task has ended.
        self.returncode: Any = None

    def poll(self) -> int | None:
        if self.returncode is None:
            done, _ = self._ray.wait([self._ref], timeout=0)
            if done:
                self.returncode = self._code()
        return self.returncode

    def _code(self) -> int:
        exceptions = self._ray.exceptions
        try:
            return int(self._ray.get(self._ref))
        except exceptions.TaskCancelledError:
            return EXIT_INTERRUPTED
        except exceptions.RayError:
            # Not retried: a run's own resume is the retry, and it needs the batch's cap.
            return LOST

    def send_signal(self, signum: int) -> None:
        """A stop (SIGINT): the task passes it on to the run, which saves and stops."""
        self._ray.cancel(self._ref, force=signum == signal.SIGKILL)

    def kill(self) -> None:
        self._ray.cancel(self._ref, force=True)

    def wait(self, timeout: float | None = None) -> int:
        self._ray.wait([self._ref], timeout=timeout)
        code = self.poll()
        return LOST if code is None else code


class RemoteLedger:
    """The batch's `Ledger` held by a Ray actor: one place for the total, whatever node a
    run is on. Built from the journals at each batch start, as a local ledger is."""

    def __init__(self, ray: Any, total_usd: float | None, spent: dict[str, float]) -> None:
        self._ray = ray
        actor = ray.remote(Ledger).options(num_cpus=0, max_restarts=0)
        self._actor = actor.remote(total_usd, spent)

    def ask(self, run: str, budget_usd: float | None) -> Decision:
        decision: Decision = self._ray.get(self._actor.ask.remote(run, budget_usd))
        return decision

    def ended(self, run: str, spent: float) -> None:
        self._ray.get(self._actor.ended.remote(run, spent))
