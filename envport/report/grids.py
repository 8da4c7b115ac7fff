"""A grid at a divergence as two small pictures, reference and port side by side: HTML
tables whose cells are coloured by their first code (MiniGrid's object type), labelled with
its name, tooltipped with every code's name, and outlined where the two sides differ. A grid
of planes (MinAtar's boolean channels) labels a cell with the planes set there.

Pure data to the template (which escapes every string): no scripts, no images, so the
page's Content-Security-Policy holds.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from envport.verifiers.reporting.divergence import GridPicture

# Cell backgrounds by first code; MiniGrid's types get their own look where named.
_NAMED = {
    "unseen": "#222222",
    "empty": "#ffffff",
    "wall": "#7f7f7f",
    "floor": "#d8d8f0",
    "door": "#c9a66b",
    "key": "#fff2a8",
    "ball": "#a8d0ff",
    "box": "#e0c0a0",
    "goal": "#7fd87f",
    "lava": "#ff8c42",
    "agent": "#ff6060",
}
_PALETTE = ("#ffffff", "#7f7f7f", "#a8d0ff", "#fff2a8", "#7fd87f", "#e0c0a0", "#d8d8f0")
# Text colours for a channel named colour/color whose code names are CSS colour names.
_CSS = {"red", "green", "blue", "purple", "yellow", "grey", "gray", "black", "orange"}


@dataclass
class CellView:
    label: str
    title: str
    background: str
    colour: str = "#000000"
    differs: bool = False
    marked: bool = False


@dataclass
class GridView:
    """One grid, both sides: rows[y][x] of cells (y downwards, x across, as MiniGrid draws)."""

    field: str
    reference: list[list[CellView]] = dataclasses.field(default_factory=list)
    port: list[list[CellView]] = dataclasses.field(default_factory=list)
    differing: int = 0


def _name(picture: GridPicture, channel: int, code: int) -> str:
    if channel < len(picture.channels):
        names = picture.codes.get(picture.channels[channel], [])
        if 0 <= code < len(names):
            return names[code]
    return str(code)


def _codes(value: Any) -> list[int]:
    return [int(v) for v in value] if isinstance(value, list) else [int(value)]


def _cell(picture: GridPicture, at: str, codes: list[int], differs: bool, marked: bool) -> CellView:
    names = [_name(picture, c, code) for c, code in enumerate(codes)]
    first = names[0]
    background = _NAMED.get(first, _PALETTE[codes[0] % len(_PALETTE)])
    colour = "#000000"
    for c, channel in enumerate(picture.channels[: len(codes)]):
        if channel in ("colour", "color") and names[c] in _CSS:
            colour = {"grey": "#555555", "yellow": "#8a7000"}.get(names[c], names[c])
    shown = ", ".join(
        f"{picture.channels[c]} {n}" if c < len(picture.channels) else n
        for c, n in enumerate(names)
    )
    if first in ("empty", "unseen"):
        # Nothing there: the other codes are padding (MiniGrid's (1, 0, 0)).
        shown = f"{picture.channels[0]} {first}" if picture.channels else first
    label = first[:2] if not first.isdigit() else first
    if first == "door" and len(names) > 2:
        label = {"open": "D_", "closed": "D", "locked": "DL"}.get(names[2], "D")
    return CellView(
        label=label,
        title=f"{picture.field}{at} = {shown}",
        background=background,
        colour=colour,
        differs=differs,
        marked=marked,
    )


def _plane_cell(picture: GridPicture, at: str, bits: list[int], differs: bool) -> CellView:
    """A cell of a grid of planes: the planes set there, by name; coloured by the first."""
    names = picture.channels
    on = [c for c, bit in enumerate(bits) if bit]
    shown = ", ".join(names[c] if c < len(names) else str(c) for c in on) or "nothing set"
    label = "+".join((names[c] if c < len(names) else str(c))[:2] for c in on)
    background = _PALETTE[1 + on[0] % (len(_PALETTE) - 1)] if on else "#ffffff"
    return CellView(
        label=label,
        title=f"{picture.field}{at} = {shown}",
        background=background,
        differs=differs,
    )


def grid_view(picture: GridPicture) -> GridView | None:
    """Both sides as rows of cells; None when the two are not grids of one shape."""
    want, got = picture.expected, picture.actual
    if not want or not got or len(want) != len(got):
        return None
    outer, inner = len(want), len(want[0]) if isinstance(want[0], list) else 0
    if inner == 0 or any(len(line) != inner for line in (*want, *got)):
        return None
    rows_first = picture.axes == "yx"  # want[y][x]: the outer axis runs down
    width, height = (inner, outer) if rows_first else (outer, inner)
    view = GridView(picture.field)
    for y in range(height):
        ref_row, port_row = [], []
        for x in range(width):
            i, j = (y, x) if rows_first else (x, y)
            a, b = _codes(want[i][j]), _codes(got[i][j])
            differs = a != b
            view.differing += differs
            at = f"[{i}][{j}]"  # the field's own index order
            if picture.planes:
                ref_row.append(_plane_cell(picture, at, a, differs))
                port_row.append(_plane_cell(picture, at, b, differs))
                continue
            ref_mark = picture.marker_expected == [x, y]
            port_mark = picture.marker_actual == [x, y]
            ref_row.append(_cell(picture, at, a, differs, ref_mark))
            port_row.append(_cell(picture, at, b, differs or ref_mark != port_mark, port_mark))
        view.reference.append(ref_row)
        view.port.append(port_row)
    return view


def grid_views(divergence: dict[str, Any]) -> list[GridView]:
    """The pictures a divergence (as dumped to JSON) carries, one per grid field."""
    views = []
    for diff in divergence.get("fields", []):
        raw = diff.get("picture") if isinstance(diff, dict) else None
        if raw is None:
            continue
        view = grid_view(GridPicture.model_validate(raw))
        if view is not None:
            views.append(view)
    return views
