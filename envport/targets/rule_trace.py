"""Where branch coverage traces: inside the reference's own `reset` and `step`, nowhere else.

Python 3.11 runs every frame slower while any trace function is set (about 3x, traced file
or not), so coverage.py's tracer is installed only for the length of each reference call
(`reference_call`) and the verifier's own work (drawing states, comparing) runs untraced.
A state bridge's reads and writes are outside: they are the spec's code, not the rules.
`envport.verifiers.coverage.branches.Measure` installs the tracer while it measures.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from envport.io import profile

_tracer: Any = None


def install(tracer: Any) -> None:
    global _tracer
    _tracer = tracer


def uninstall() -> None:
    global _tracer
    _tracer = None


@contextmanager
def reference_call() -> Iterator[None]:
    """Trace the reference's frames started inside this block (when a measure runs)."""
    tracer = _tracer
    if tracer is None:
        with profile.phase("reference"):
            yield
        return
    previous = sys.gettrace()
    sys.settrace(tracer)
    # Apart in the profile: the tracer's cost is the coverage's, not the reference's.
    try:
        with profile.phase("reference_traced"):
            yield
    finally:
        sys.settrace(previous)


@contextmanager
def untraced() -> Iterator[None]:
    """The reference's calls inside this block run without the tracer: bulk draws whose
    branches a traced pilot of the same calls has already shown (l2.reset's sample)."""
    global _tracer
    tracer, _tracer = _tracer, None
    try:
        yield
    finally:
        _tracer = tracer


# Condition coverage's hook (envport.verifiers.coverage.conditions): called with the env, a
# function stepping an env, and the action, before each reference step; it steps a copy.
_twin: Any = None


def install_twin(hook: Any) -> None:
    global _twin
    _twin = hook


def uninstall_twin() -> None:
    global _twin
    _twin = None


def before_step(env: Any, step: Any, action: Any) -> None:
    """Let condition coverage take this step on a copy of `env` first (when it measures)."""
    if _twin is not None:
        _twin(env, step, action)
