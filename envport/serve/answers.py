"""The shape of a worker's answer, checked by the driver before any verifier reads it.

A worker runs untrusted code, which can rewrite the harness beside it or write frames of
its own: an answer may be `{}`, have zero rows, be one value broadcast, or carry types the
wire does not know. Each is named here as the port's failure (a `PortError` the checks
report), never left to become an IndexError deep in a verifier.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from envport.serve.ops import (
    Holds,
    LoadPort,
    Op,
    Probe,
    Rollout,
    SessionScript,
    SessionStep,
    StepBatch,
    StepTiled,
)

STEP_FIELDS = ("obs", "reward", "terminated", "truncated")
# Parts of a step answer that hold one value per transition (obs may have more axes).
_SCALAR_FIELDS = ("reward", "terminated", "truncated")


def problem(op: Op | None, result: Any) -> str | None:
    """What is wrong with `result` as the answer to `op`, or None when it has the shape the
    verifiers read (their values are still for the checks to judge)."""
    if isinstance(op, LoadPort):
        # (A crate still being generated is only built: it names no backend.)
        if not isinstance(result, dict) or not isinstance(result.get("backend"), str | None):
            return f"expected a dict naming its backend, got {_kind(result)}"
        return None
    if isinstance(op, Rollout):
        return _steps(result, tuple(np.shape(op.actions)[:2]))
    if isinstance(op, StepBatch):
        rows = tuple(np.shape(op.actions)[:1])
        return _steps(result, rows) or (_state(result, rows) if op.read_state else None)
    if isinstance(op, SessionStep):
        return _steps(result, tuple(np.shape(op.actions)[:1]))
    if isinstance(op, StepTiled):
        return _steps(result, tuple(np.shape(op.kept)[:1]))
    if isinstance(op, SessionScript):
        return _scripted(op, result)
    if isinstance(op, Probe):
        return _probed(op, result)
    if isinstance(op, Holds):
        return _held(op, result)
    return None


def _held(op: Holds, result: Any) -> str | None:
    rows = len(next(iter(op.states.values()))) if op.states else 0
    if not isinstance(result, dict) or "held" not in result:
        return f"expected a dict holding `held`, got {_kind(result)}"
    held = result["held"]
    if held is not None and (not isinstance(held, np.ndarray) or held.shape != (rows,)):
        return f"`held` is {_kind(held)}, expected one bool per state ({rows})"
    return None


def _scripted(op: SessionScript, result: Any) -> str | None:
    """A script's answers: one per request, each the shape its own request's answer has."""
    requests = op.ops()
    if not isinstance(result, list) or len(result) != len(requests):
        return f"expected a list of {len(requests)} answers, got {_kind(result)}"
    for index, (request, answer) in enumerate(zip(requests, result, strict=True)):
        wrong = problem(request, answer)
        if wrong is not None:
            return f"answer {index} ({request.op}): {wrong}"
    return None


def _probed(op: Probe, result: Any) -> str | None:
    """A probe answer: the outputs (dicts) of each input's two calls, and of the eager calls
    asked for (fewer would skip the jit check unseen)."""
    if not isinstance(result, dict):
        return f"expected a dict of first, second, eager, got {_kind(result)}"
    inputs = len(op.befores)
    eager = min(op.eager_first, inputs) if op.jax else 0
    for name, count in (("first", inputs), ("second", inputs), ("eager", eager)):
        calls = result.get(name)
        if not isinstance(calls, list) or len(calls) != count:
            return f"{name}: expected a list of {count} outputs, got {_kind(calls)}"
        if not all(isinstance(call, dict) for call in calls):
            return f"{name}: expected each output a dict of arrays"
    return None


def _kind(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape}"
    if isinstance(value, dict):
        return "{}" if not value else f"a dict with keys {sorted(map(str, value))}"
    return type(value).__name__


def _steps(result: Any, leading: tuple[int, ...]) -> str | None:
    """A step answer: the four outputs, each with `leading` axes (batch, and time for a
    rollout); timings, when given, plain numbers."""
    if not isinstance(result, dict):
        return f"expected a dict of {', '.join(STEP_FIELDS)}, got {_kind(result)}"
    missing = [name for name in STEP_FIELDS if name not in result]
    if missing:
        return f"{', '.join(missing)} missing (got {_kind(result)})"
    for name in STEP_FIELDS:
        value = result[name]
        if not isinstance(value, np.ndarray):
            return f"`{name}` is {_kind(value)}, not an array"
        if value.dtype.kind not in "biuf" and name != "obs":
            return f"`{name}` is {_kind(value)}, not a numeric array"
        # An observation of a dtype numpy cannot compute with (bfloat16 arrives as raw bytes)
        # is well formed here: the comparison names its dtype as the divergence, with a replay.
        if value.shape[: len(leading)] != leading:
            return (
                f"`{name}` has shape {value.shape}, expected {len(leading)} leading axes "
                f"{leading} (one row per {'episode and step' if len(leading) == 2 else 'env'})"
            )
        # A game's reward is one per player (envport.targets.turns): one more axis.
        extra = 1 if name == "reward" else 0
        if name in _SCALAR_FIELDS and not len(leading) <= value.ndim <= len(leading) + extra:
            return f"`{name}` has shape {value.shape}, expected one value per row {leading}"
    for name in ("compile_s", "run_s"):
        if name in result and not isinstance(result[name], numbers.Real):
            return f"`{name}` is {_kind(result[name])}, not a number"
    return None


def _state(result: dict, leading: tuple[int, ...]) -> str | None:
    """The state after a step: None (the port reads none back) or one row per env of each
    field (the comparison judges its values)."""
    state = result.get("state")
    if state is None:
        return None
    if not isinstance(state, dict) or not all(isinstance(k, str) for k in state):
        return f"`state` is {_kind(state)}, not a dict of arrays by field"
    for name, value in state.items():
        if not isinstance(value, np.ndarray) or value.shape[: len(leading)] != leading:
            return (
                f"`state.{name}` is {_kind(value)}, expected an array with {leading[0]} rows "
                "(one per env)"
            )
    return None
