"""Start states where Crafter's crafting, placing, fighting, eating and waking rules
decide, for `[state.reached] book`.

Random play almost never holds wood by a table (about one state in a thousand of its
short episodes): envport plays every action from each of these states, and every action
after each (`depth = 2`), and the port is put through every one of those steps (L1's
`reached`). Each is the world the reference was reset to with the player's surroundings and
inventory laid out by hand (the start area is grass, with no object within 3 cells):

- workshop: a table and a furnace within reach, a tree ahead, stone, iron and water
  beside, and enough for most recipes (wood 5, stone 5, coal 2, iron 2, a sapling, a
  wood and a stone pickaxe);
- one short: the same, with one wood (a table takes two, a tool one), three stone (a
  furnace takes four), one iron and no coal or sapling;
- no furnace: the table alone, rich: the iron recipes fail on their missing furnace;
- larder: a cow of health 1 ahead, a ripe plant beside, an unripe one of 250 steps (ripe
  past 300) on the other side, food and drink low, energy low, lava two steps down (a move
  onto lava kills);
- out of reach: a table and a furnace two cells away (crafting needs them within one),
  iron beside with a wood pickaxe only (iron needs a stone one), a zombie of health 3
  ahead and a stone sword only (its three damage kills at once: L1's `reached` rows
  compare what a step shows, not the state it leaves, so a wound alone would not show);
- waking: asleep with full energy (the next step wakes the player: wake_up);
- tunnel: a skeleton of health 2 ahead on a path it cannot leave (a bare hand wounds it,
  a second blow kills it: defeat_skeleton, and its own update then removes it), an arrow
  flying into a table on one side and one into a furnace on the other (an arrow turns a
  table or furnace it hits into path);
- edge: the player on the map's first column facing off the map (what lies beyond is
  nothing: no move, no collect, no place there).
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Iterator
from typing import Any

MATERIAL = {"water": 1, "grass": 2, "stone": 3, "path": 4, "tree": 6, "lava": 7}
MATERIAL |= {"iron": 9, "table": 11, "furnace": 12}


def _bridge(env: Any) -> Any:
    # Harness files load by path, not as a package: the bridge is the module the
    # reference's env class was defined in.
    return sys.modules[type(env.unwrapped).__module__]


def _lay(state: dict, cells: dict[tuple[int, int], str], items: dict[str, int]) -> None:
    x, y = state["player_pos"]
    for (dx, dy), name in cells.items():
        state["mat_map"][x + dx, y + dy] = MATERIAL[name]
    for name, count in items.items():
        state[f"inventory.{name}"] = count


RICH = {"wood": 5, "stone": 5, "coal": 2, "iron": 2, "sapling": 1}
RICH |= {"wood_pickaxe": 1, "stone_pickaxe": 1}
SHORT = {"wood": 1, "stone": 3, "coal": 0, "iron": 1, "sapling": 0}
WORKSHOP = {(-1, -1): "table", (1, -1): "furnace", (0, 1): "tree", (-1, 0): "stone"}
WORKSHOP |= {(1, 0): "iron", (0, -1): "water"}


def _workshop(state: dict) -> None:
    _lay(state, WORKSHOP, RICH)


def _one_short(state: dict) -> None:
    _lay(state, WORKSHOP, SHORT)


def _no_furnace(state: dict) -> None:
    _lay(state, {**WORKSHOP, (1, -1): "grass"}, RICH)


def _last_order(state: dict) -> int:
    """The last place in the world's list of objects (new objects go after it)."""
    kinds = ("zombies", "skeletons", "cows", "arrows", "plants")
    return max((r[0] for kind in kinds for r in state[kind]), default=-1)


def _larder(state: dict) -> None:
    _lay(state, {(0, 2): "lava"}, {"food": 1, "drink": 1, "energy": 2})
    x, y = (int(v) for v in state["player_pos"])
    order = _last_order(state)
    # The cow ahead: the player acts before it moves, so `do` eats it at once.
    state["plants"] = [[order + 1, x + 1, y, 1, 301], [order + 2, x - 1, y, 1, 250]]
    state["cows"] = [*state["cows"], [order + 3, x, y - 1, 1]]
    state["facing"] = [0, -1]
    state["sleeping"] = False


FAR = {(-2, 0): "table", (2, 0): "furnace", (-1, 0): "iron", (0, -1): "stone"}
ARMED = {**RICH, "stone_pickaxe": 0, "wood_sword": 0, "stone_sword": 1, "iron_sword": 0}


def _out_of_reach(state: dict) -> None:
    _lay(state, FAR, ARMED)
    x, y = (int(v) for v in state["player_pos"])
    state["zombies"] = [*state["zombies"], [_last_order(state) + 1, x, y + 1, 3, 5]]
    state["facing"] = [0, 1]
    state["sleeping"] = False


def _waking(state: dict) -> None:
    _lay(state, {}, {"energy": 9})
    state["sleeping"] = True


def _tunnel(state: dict) -> None:
    _lay(state, {(0, -1): "path", (3, 0): "table", (-3, 0): "furnace"}, {})
    x, y = (int(v) for v in state["player_pos"])
    order = _last_order(state)
    state["skeletons"] = [*state["skeletons"], [order + 1, x, y - 1, 2, 0]]
    state["arrows"] = [*state["arrows"], [order + 2, x + 2, y, 1, 0], [order + 3, x - 2, y, -1, 0]]
    state["facing"] = [0, -1]
    state["sleeping"] = False


def _edge(state: dict) -> None:
    y = int(state["player_pos"][1])
    state["player_pos"] = [0, y]
    near = {(dx, dy) for dx in range(3) for dy in (-1, 0, 1)}
    # Grass around the player there, and no creature on it.
    _lay(state, dict.fromkeys(near, "grass"), {})
    for kind in ("zombies", "skeletons", "cows", "arrows", "plants"):
        state[kind] = [r for r in state[kind] if (r[1], r[2] - y) not in near]
    state["facing"] = [-1, 0]
    state["sleeping"] = False


LAYOUTS = (_workshop, _one_short, _no_furnace, _larder, _out_of_reach, _waking, _tunnel, _edge)


def positions(env: Any) -> Iterator[None]:
    """Each layout over the world the reference was reset to. No reset here: a reset makes
    a new generator, and the recorder wraps the one the reference's own reset left."""
    bridge = _bridge(env)
    start = bridge.read_state(env)
    for layout in LAYOUTS:
        state = copy.deepcopy(start)
        layout(state)
        bridge.write_state(env, state)
        yield
