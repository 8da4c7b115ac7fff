"""L1 probes for the NumPy Crafter port's module functions (harness code, not generated).

`pixels.render`: Crafter's image of a state. `call` runs in the worker: it builds the
port's World and Player from the state's leaves (the contract's classes) and renders with
the night's noise made from the state (`_night`); `expect` renders the same state with
Crafter's own renderer, handed the same noise (harness/image.py). Pixels compare
exactly: the port lights in float64 as Crafter does. A divergence names a pixel,
`image[y, x, channel]`, the 9x7 view's cell (x // 7, y // 7) or, from row 49 down, the
inventory's.
"""

import importlib
import importlib.util
from pathlib import Path

import numpy as np

from envport.verifiers.draws.probes import probe

KINDS = {
    "zombies": ("health", "counter"),
    "skeletons": ("health", "counter"),
    "cows": ("health",),
    "arrows": ("facing_x", "facing_y"),
    "plants": ("health", "grown"),
}
ITEMS = ["health", "food", "drink", "energy", "sapling", "wood", "stone", "coal", "iron"]
ITEMS += ["diamond", "wood_pickaxe", "stone_pickaxe", "iron_pickaxe", "wood_sword"]
ITEMS += ["stone_sword", "iron_sword"]
LOCAL = (63, 49)


def _night(state):
    """Numbers as Crafter's render draws them at night, `uniform(32, 127, (63, 49))` from a
    legacy RandomState, seeded from the state; `expect` hands Crafter's render the same."""
    seed = int(state["step"]) * 7919 + int(np.asarray(state["player_pos"]).sum())
    return np.random.RandomState(seed).uniform(32, 127, LOCAL)


def _scene(module, state):
    """The port's World and Player for a state: the player first, then the objects in the
    world's list order (`order`)."""
    package = module.__name__.rpartition(".")[0]
    world_module = importlib.import_module(f"{package}.world")
    player_module = importlib.import_module(f"{package}.player")
    chunks = [int(c) for c in state["chunks"][: int(state["chunks.length"])]]
    world = world_module.World(np.asarray(state["mat_map"]), chunks)
    pos, facing = state["player_pos"], state["facing"]
    player = player_module.Player((int(pos[0]), int(pos[1])), (int(facing[0]), int(facing[1])))
    player.inventory = {name: int(state[f"inventory.{name}"]) for name in ITEMS}
    player.sleeping = bool(state["sleeping"])
    world.add(player)
    records = []
    for kind, fields in KINDS.items():
        for record in state[kind][: int(state[f"{kind}.length"])]:
            rest = dict(zip(fields, (int(v) for v in record[3:]), strict=True))
            records.append((int(record[0]), kind, (int(record[1]), int(record[2])), rest))
    for _, kind, pos, rest in sorted(records, key=lambda r: r[0]):
        thing = world_module.Thing(kind, pos, rest.get("health", 0), rest.get("counter", 0))
        if kind == "arrows":
            thing.facing = (rest["facing_x"], rest["facing_y"])
        thing.grown = rest.get("grown", 0)
        world.add(thing)
    return world, player


def _image_harness():
    path = Path(__file__).parent.parent / "harness" / "image.py"
    spec = importlib.util.spec_from_file_location("crafter_harness_image", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_HARNESS = []


def _harness():
    if not _HARNESS:
        _HARNESS.append(_image_harness())
    return _HARNESS[0]


@probe("pixels.render")
def render(module, before, action, after, noise):
    world, player = _scene(module, before)
    image = module.render(world, player, float(before["daylight"]), _night(before))
    return {"image": np.asarray(image)}


@render.expect
def _(before, action, after, transition):
    return {"image": _harness().reference_image(before, _night(before))}


@render.arrange
def _(state, action, pick):
    return _harness().arranged(state, action, pick)
