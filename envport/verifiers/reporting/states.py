"""Reference and port states side by side: stacked into arrays, compared field by field.

Every level that holds the port's state to the reference's (L1's probes, L2's state reads,
the vector and sampler checks) compares them here, and a difference found inside a check
travels up as `Divergent` to the level that reports it. Below the levels so that none of
them imports another for it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from envport.errors import PortRaised
from envport.spec import PortSpec
from envport.structure import canonical, enum_name
from envport.targets.reference import State
from envport.verifiers.reporting.divergence import FieldDiff
from envport.verifiers.reporting.grids import as_grid, attach_state_pictures, cell_component


def stack_states(states: list[State]) -> dict[str, np.ndarray]:
    # np.array, not np.stack: the same result for equal shapes, several times faster.
    return {name: np.array([s[name] for s in states]) for name in states[0]}


class Divergent(Exception):
    def __init__(self, diffs: list[FieldDiff], inputs: dict[str, Any], message: str) -> None:
        super().__init__(message)
        self.diffs = diffs
        self.inputs = inputs

    @classmethod
    def raised(cls, error: PortRaised, inputs: dict[str, Any]) -> Divergent:
        """The port raised on these inputs: a failure like any other answer that differs,
        so a check shrinks it and reports its start state, action and replay line. Its
        message is the port's own error and what the port printed (each cut to a bound by
        the worker's client; printers make it inert)."""
        return cls([], inputs, port_words(error))


def port_words(error: PortRaised) -> str:
    """A raise as a divergence's message: the error's line, then the port's output and the
    traceback's frames in the port."""
    return f"the port raised: {error}" + (f"\n{error.detail}" if error.detail else "")


def shortest_raising(
    high: int, error: PortRaised, raises: Callable[[int], PortRaised | None]
) -> tuple[int, PortRaised]:
    """The smallest k in 1..high for which `raises(k)` gives the port's error (true of
    `high`, with `error`), by bisection: a few requests, however large `high` is."""
    low = 1
    while low < high:
        middle = (low + high) // 2
        failure = raises(middle)
        if failure is None:
            low = middle + 1
        else:
            high, error = middle, failure
    return high, error


def field_diffs(
    spec: PortSpec, expected: dict[str, Any], actual: dict[str, Any], label: str = ""
) -> list[FieldDiff]:
    """Differences between two dicts of arrays, component by component, with tolerances.
    Components are named by leaf path (`hand.player[2]`), enum codes by their names, and a
    list's items past its length are not compared (envport.structure)."""
    expected, actual = canonical(spec.state, expected), canonical(spec.state, actual)
    diffs = []
    for key, want_raw in expected.items():
        name = f"{label}{key}"
        if key not in actual:
            diffs.append(FieldDiff(field=name, expected="present", actual="missing"))
            continue
        want, got = np.asarray(want_raw), np.asarray(actual[key])
        if got.dtype.kind not in "biuf":
            diffs.append(
                FieldDiff(field=f"{name}.dtype", expected=str(want.dtype), actual=str(got.dtype))
            )
            continue
        if want.shape != got.shape:
            diffs.append(
                FieldDiff(field=f"{name}.shape", expected=list(want.shape), actual=list(got.shape))
            )
            continue
        want, got = as_grid(spec, key, want), as_grid(spec, key, got)
        record = _record(spec, key, want.ndim)
        grid = key in spec.state.grids  # a declared grid's components read by cell: [3][4]
        # Tolerances are the spec's by the field's own name (`physics[2]`), not the label's.
        for index in _suspects(spec, key, want, got):
            if grid:
                component = name + "".join(f"[{i}]" for i in index)
            else:
                component = name + (f"[{', '.join(map(str, index))}]" if index else "")
            if record is not None:
                component = f"{name}[{index[0]}].{record[index[1]]}"
            w, g = want[index], got[index]
            if want.dtype.kind in "biu" and got.dtype.kind in "biu":
                if w != g:
                    diffs.append(_discrete_diff(spec, key, name, component, index, want, got))
                continue
            atol, rtol = spec.tolerance_for(component.removeprefix(label)).bounds(False)
            if not np.isclose(float(g), float(w), atol=atol, rtol=rtol):
                diffs.append(
                    FieldDiff(
                        field=component,
                        expected=float(w),
                        actual=float(g),
                        difference=abs(float(g) - float(w)),
                        atol=atol,
                        rtol=rtol,
                    )
                )
    attach_state_pictures(spec, expected, actual, diffs, label)
    return diffs


def _suspects(spec: PortSpec, name: str, want: np.ndarray, got: np.ndarray) -> list[tuple]:
    """The indices that may differ, in order: every one where a component has a tolerance
    of its own (`physics[2]`), else those the whole-array test finds (a chess board's
    thousands of equal codes are not walked one by one in Python)."""
    if "[" in name or any(key.startswith(f"{name}[") for key in spec.tolerance):
        return list(np.ndindex(want.shape))
    if want.dtype.kind in "biu" and got.dtype.kind in "biu":
        differs = want != got
    else:
        atol, rtol = spec.tolerance_for(name).bounds(free_running=False)
        wide_want, wide_got = want.astype(float), got.astype(float)
        differs = ~np.isclose(wide_got, wide_want, atol=atol, rtol=rtol)
    return [tuple(int(i) for i in index) for index in np.argwhere(differs)]


def _record(spec: PortSpec, key: str, ndim: int) -> list[str] | None:
    """The field names of a list of records' items (`e_subs[2].x`), for one env's list."""
    declared = spec.state.declared.get(key)
    if declared is None or declared.record is None or ndim != 2:
        return None
    return declared.record


def _discrete_diff(
    spec: PortSpec,
    key: str,
    name: str,
    component: str,
    index: tuple[int, ...],
    want: np.ndarray,
    got: np.ndarray,
) -> FieldDiff:
    """A differing integer component: a declared grid's by cell, channel and code names
    (`grid[3][4].state: expected door(locked), got door(open)`), an enum's by its names."""
    grid = spec.state.grids.get(key) or spec.state.cells.get(key)
    named = cell_component(grid, name, index, want, got) if grid is not None else None
    if named is not None:
        field, expected, actual = named
        return FieldDiff(field=field, expected=expected, actual=actual)
    leaf = key + component.removeprefix(name)
    return FieldDiff(
        field=component,
        expected=enum_name(spec.state, leaf, want[index].item()),
        actual=enum_name(spec.state, leaf, got[index].item()),
    )
