"""Grid pictures at a divergence: where the spec declares a state field (`state.grids`) or
the observation's first components (`observation.grid`) a grid of cells, the first differing
component's FieldDiff carries both whole grids, so the report can draw them side by side.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from envport.spec import GridSpec, PortSpec
from envport.verifiers.reporting.divergence import FieldDiff, GridPicture
from envport.verifiers.reporting.moves import record_moves, state_moves


def as_grid(spec: PortSpec, key: str, value: np.ndarray) -> np.ndarray:
    """A state field in its declared grid's shape: one held flat (chess's 64 squares) is
    read as the grid it is ([8, 8]), so its components are named by cell."""
    grid = spec.state.grids.get(key)
    if grid is None or grid.shape is None or value.ndim != 1:
        return value
    return value.reshape(grid.shape) if value.size == int(np.prod(grid.shape)) else value


def _code_name(grid: GridSpec, channel: int, code: int) -> str:
    names = grid.codes.get(grid.channels[channel], [])
    return names[code] if 0 <= code < len(names) else str(code)


def cell_component(
    grid: GridSpec, name: str, index: tuple[int, ...], want: np.ndarray, got: np.ndarray
) -> tuple[str, str, str] | None:
    """A differing component of a declared grid of cells (`want`/`got` shaped [X, Y, C],
    `index` = (x, y, c)), or of a field holding one cell ([C], `index` = (c,)), named by cell
    and channel, its values by their code names:
    `grid[3][4].state`, `door(locked)` against `door(open)`. A channel other than the first
    (the object's type) shows the cell's type around its value, so a door's state or a
    key's colour reads as what it is; a channel of a grid of `planes` reads `set` or
    `clear`. None where the grid declares no channels for it."""
    if len(index) not in (1, 3) or len(index) != want.ndim:
        return None
    if len(grid.channels) != want.shape[-1]:
        return None
    *at, c = index  # a grid's (x, y), or none: a field holding one cell (state.cells)
    where = "".join(f"[{i}]" for i in at)
    field = f"{name}{where}.{grid.channels[c]}"

    def value(cells: np.ndarray) -> str:
        cell = cells[tuple(at)]
        if grid.planes:
            return "set" if cell[c] else "clear"
        own = _code_name(grid, c, int(cell[c]))
        return own if c == 0 else f"{_code_name(grid, 0, int(cell[0]))}({own})"

    return field, value(want), value(got)


def _marker(grid: GridSpec, state: dict[str, Any]) -> list[int] | None:
    if grid.marker is None or grid.marker not in state:
        return None
    value = np.asarray(state[grid.marker]).reshape(-1)
    return [int(v) for v in value[:2]] if value.size >= 2 else None


def _picture(
    grid: GridSpec,
    name: str,
    want: np.ndarray,
    got: np.ndarray,
    markers: tuple[Any, Any],
    enum: dict[str, int] | None = None,
) -> GridPicture:
    channels, codes = list(grid.channels), dict(grid.codes)
    if not channels and enum:
        # A grid of one code per cell whose field declares an enum: the cells by its names.
        names = [str(code) for code in range(max(enum.values()) + 1)]
        for label, code in enum.items():
            if code >= 0:
                names[code] = label
        channels, codes = [name], {name: names}
    return GridPicture(
        field=name,
        channels=channels,
        codes=codes,
        expected=np.asarray(want).astype(np.int64).tolist(),
        actual=np.asarray(got).astype(np.int64).tolist(),
        marker_expected=markers[0],
        marker_actual=markers[1],
        axes=grid.axes,
        planes=grid.planes,
    )


def attach_state_pictures(
    spec: PortSpec,
    expected: dict[str, Any],
    actual: dict[str, Any],
    diffs: list[FieldDiff],
    label: str = "",
) -> None:
    """Give the first differing component of each declared grid field both whole grids."""
    for key, grid in spec.state.grids.items():
        if key not in expected or key not in actual:
            continue
        want = as_grid(spec, key, np.asarray(expected[key]))
        got = as_grid(spec, key, np.asarray(actual[key]))
        if want.shape != got.shape or want.ndim < 2 or got.dtype.kind not in "biu":
            continue
        prefix = f"{label}{key}["
        first = next((d for d in diffs if d.field.startswith(prefix)), None)
        if first is not None:
            markers = (_marker(grid, expected), _marker(grid, actual))
            declared = spec.state.declared.get(key)
            enum = spec.state.enums.get(declared.enum) if declared and declared.enum else None
            first.picture = _picture(grid, f"{label}{key}", want, got, markers, enum)
    # A probe's or a transition's observation, compared as a field of its own.
    if not label and "obs" in expected and "obs" in actual:
        attach_obs_picture(spec, np.asarray(expected["obs"]), np.asarray(actual["obs"]), diffs)
        record_moves(spec, np.asarray(expected["obs"]), diffs)
    state_moves(spec, expected, diffs)


def attach_obs_picture(
    spec: PortSpec, want_obs: np.ndarray, got_obs: np.ndarray, diffs: list[FieldDiff]
) -> None:
    """The observation's grid (its first prod(shape) components, C order) on the first
    differing obs component inside it; every differing component inside it named by cell
    and channel, its values by their code names, as a state grid's are
    (`obs[1][5].state: expected door(locked), got door(open)`, not `obs[47]: expected 2, got 0`)."""
    grid = spec.observation.grid
    if grid is None or grid.shape is None:
        return
    size = int(np.prod(grid.shape))
    want, got = np.asarray(want_obs).reshape(-1), np.asarray(got_obs).reshape(-1)
    if want.size < size or got.size < size or got.dtype.kind not in "biu":
        return
    inside = {f"obs[{i}]": i for i in range(size)} | {
        f"obs.{name}": i for i, name in enumerate(spec.observation.names[:size])
    }
    shape = tuple(grid.shape)
    want_grid, got_grid = want[:size].reshape(shape), got[:size].reshape(shape)
    first = next((d for d in diffs if d.field in inside), None)
    if first is not None:
        first.picture = _picture(grid, "obs", want_grid, got_grid, (None, None))
    for diff in diffs:
        if diff.field not in inside:
            continue
        index = tuple(int(i) for i in np.unravel_index(inside[diff.field], shape))
        named = cell_component(grid, "obs", index, want_grid, got_grid)
        if named is not None:
            diff.field, diff.expected, diff.actual = named
            diff.difference = diff.atol = diff.rtol = None
