"""`envport check`'s tests of what a spec declares against what the reference actually has.

A grid declared in the wrong shape loads and runs: a divergence then names cells that do not
exist (`obs[6][5]` of a [7, 6, 2] grid over Connect Four's [6, 7, 2] view), a chess board of
[8, 9] over 64 squares is drawn as nothing, and a third channel name over two planes labels
nothing. A harness file or function that does not exist (`[state.reached] book`, `[game]
moves`) is found only by the check that first needs it, minutes into a verify. Each is
refused here in one line naming the key and what the reference (or the file) has.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from envport.errors import SpecError
from envport.spec import PortSpec
from envport.state_spec import GridSpec
from envport.targets.randomness import load_harness
from envport.targets.reference import Reference, import_attr
from envport.verifiers.draws.probes import load_probes


def check_grids(spec: PortSpec, state: dict[str, Any], reference: Reference, obs: Any) -> list[str]:
    """Every declared grid and cell against the reference's reset state and observation."""
    checked = []
    for name, grid in spec.state.grids.items():
        value = _field(state, name, f"state.grids.{name}")
        shape = _grid_shape(grid, value, f"state.grids.{name}", f"`{name}`")
        _channels(grid, shape, f"state.grids.{name}", f"`{name}`")
        _codes(grid, value.reshape(shape), f"state.grids.{name}", f"`{name}`")
        checked.append(f"{name} {list(shape)}")
    for name, cell in spec.state.cells.items():
        value = _field(state, name, f"state.cells.{name}")
        if cell.channels and len(cell.channels) != value.size:
            raise SpecError(
                f"key `state.cells.{name}.channels`: {len(cell.channels)} names, but the "
                f"reference's `{name}` holds {value.size} values ({_shape(value)})"
            )
        _codes(cell, value.reshape(-1), f"state.cells.{name}", f"`{name}`")
        checked.append(f"{name} (a cell)")
    seen = spec.observation.grid
    if seen is not None and seen.shape is not None:
        checked.append(_observation_grid(seen, list(seen.shape), reference, obs))
    return [f"grids: {', '.join(checked)} as the reference holds them"] if checked else []


def _observation_grid(grid: GridSpec, shape: list[int], reference: Reference, obs: Any) -> str:
    # A game's observation reaches the levels flat in a turn record: its own shape is the
    # player's view as PettingZoo gives it.
    view = getattr(reference.env, "observation_shape", None)
    seen = list(view) if view is not None else list(np.asarray(obs).shape)
    key = "observation.grid"
    if len(seen) >= 2 and shape != seen:
        raise SpecError(
            f"key `{key}.shape`: {shape} over the reference's observation of shape {seen}; "
            f"declare `shape = {seen}`"
        )
    cells, size = int(np.prod(shape)), int(np.prod(seen))
    if cells > size:
        raise SpecError(
            f"key `{key}.shape`: {shape} holds {cells} cells, but the reference's observation "
            f"has {size} components"
        )
    _channels(grid, tuple(shape), key, "observation")
    if view is None:  # a turn record's integers are the game's; its codes are not declared
        _codes(grid, np.asarray(obs).reshape(-1)[:cells].reshape(shape), key, "observation")
    return f"observation {shape}"


def _field(state: dict[str, Any], name: str, key: str) -> np.ndarray:
    if name not in state:
        raise SpecError(
            f"key `{key}`: the reference's state has no field `{name}` (it has "
            f"{', '.join(state) or 'none'})"
        )
    return np.asarray(state[name])


def _shape(value: np.ndarray) -> str:
    return f"shape {list(value.shape)}"


def _grid_shape(grid: GridSpec, value: np.ndarray, key: str, what: str) -> tuple[int, ...]:
    if grid.shape is None:
        if value.ndim not in (2, 3):
            raise SpecError(
                f"key `{key}.shape`: not given, and the reference's {what} is not a grid "
                f"({_shape(value)}): declare the shape it is read in"
            )
        return tuple(value.shape)
    declared = tuple(grid.shape)
    # A field held flat is read in the declared shape (chess's 64 squares as [8, 8]).
    if value.ndim == 1 and int(np.prod(declared)) != value.size:
        raise SpecError(
            f"key `{key}.shape`: {list(declared)} holds {int(np.prod(declared))} cells, but the "
            f"reference's {what} holds {value.size} values ({_shape(value)})"
        )
    if value.ndim > 1 and tuple(value.shape) != declared:
        raise SpecError(
            f"key `{key}.shape`: {list(declared)} over the reference's {what} of "
            f"{_shape(value)}; declare `shape = {list(value.shape)}`"
        )
    return declared


def _channels(grid: GridSpec, shape: tuple[int, ...], key: str, what: str) -> None:
    if not grid.channels:
        return
    held = shape[-1] if len(shape) == 3 else 1
    if len(grid.channels) != held:
        raise SpecError(
            f"key `{key}.channels`: {len(grid.channels)} names ({', '.join(grid.channels)}), but "
            f"the reference's {what} has {held} channel{'s' if held != 1 else ''} per cell "
            f"(shape {list(shape)})"
        )


def _codes(grid: GridSpec, cells: np.ndarray, key: str, what: str) -> None:
    """A code the reference holds that its channel's names do not reach."""
    for index, channel in enumerate(grid.channels):
        names = grid.codes.get(channel)
        if not names or cells.dtype.kind not in "biu":
            continue
        # A grid's [X, Y, C] or [X, Y] (one channel), or one cell's C values.
        values = cells[..., index] if cells.ndim != 2 else cells
        top = int(values.max(initial=0))
        if top >= len(names) or int(values.min(initial=0)) < 0:
            raise SpecError(
                f"key `{key}.codes.{channel}`: {len(names)} names (codes 0 to {len(names) - 1}), "
                f"but the reference's {what} holds code {top} in `{channel}`"
            )


def check_harness(spec: PortSpec) -> list[str]:
    """Every harness file and function the spec names, loaded as its check would load it."""
    named: list[tuple[str, str | None]] = [
        ("game.moves", spec.game.moves if spec.game is not None else None),
        ("state.reached.book", spec.state.reached.book if spec.state.reached else None),
        ("levels.l3.policy", spec.levels.l3.policy),
    ]
    found = []
    for key, target in named:
        if target is None:
            continue
        function = import_attr(target, key, spec)
        if not callable(function):
            raise SpecError(f"key `{key}`: `{target}` is not a function")
        found.append(key)
    for name, listed in spec.targets.items():
        if listed.probes is not None:
            key = f"targets.{name}.probes"
            load_probes(spec.harness_file(listed.probes), key)
            found.append(key)
    if spec.randomness is not None:
        load_harness(spec)
        found.append("randomness.harness")
    return [f"harness: {', '.join(found)} found"] if found else []
