"""Hand-written known-good port: a test subject for the verifier, not model output.

Crafter's world: the materials and the rules' tables (Crafter's own, carried here), the
daylight curve, chunks, and one env's world as Python objects: the material map, the
objects in the world's list order, which cell holds which object, and the chunk keys in the
order they were made (the order the balance walks them)."""

from __future__ import annotations

import numpy as np

AREA = 64
CHUNK = 12
CHUNKS_PER_SIDE = 6
LENGTH = 10000
UPDATE_RADIUS = 18  # 2 * max(view): objects this far from the player or more sleep
MATERIALS = ["water", "grass", "stone", "path", "sand", "tree", "lava", "coal", "iron"]
MATERIALS += ["diamond", "table", "furnace"]
ID = {name: i + 1 for i, name in enumerate(MATERIALS)}
NAME = {i: name for name, i in ID.items()}
WALKABLE = ("grass", "sand", "path")
ARROW_WALKABLE = (*WALKABLE, "water", "lava")
ITEMS = ["health", "food", "drink", "energy", "sapling", "wood", "stone", "coal", "iron"]
ITEMS += ["diamond", "wood_pickaxe", "stone_pickaxe", "iron_pickaxe", "wood_sword"]
ITEMS += ["stone_sword", "iron_sword"]
MAX_ITEM = 9
ACHIEVEMENTS = ["collect_coal", "collect_diamond", "collect_drink", "collect_iron"]
ACHIEVEMENTS += ["collect_sapling", "collect_stone", "collect_wood", "defeat_skeleton"]
ACHIEVEMENTS += ["defeat_zombie", "eat_cow", "eat_plant", "make_iron_pickaxe"]
ACHIEVEMENTS += ["make_iron_sword", "make_stone_pickaxe", "make_stone_sword"]
ACHIEVEMENTS += ["make_wood_pickaxe", "make_wood_sword", "place_furnace", "place_plant"]
ACHIEVEMENTS += ["place_stone", "place_table", "wake_up"]
ACTIONS = ["noop", "move_left", "move_right", "move_up", "move_down", "do", "sleep"]
ACTIONS += ["place_stone", "place_table", "place_furnace", "place_plant"]
ACTIONS += ["make_wood_pickaxe", "make_stone_pickaxe", "make_iron_pickaxe"]
ACTIONS += ["make_wood_sword", "make_stone_sword", "make_iron_sword"]
# material: (requirements, item received, what the cell becomes, probability)
COLLECT = {
    "tree": ({}, "wood", "grass", 1.0),
    "stone": ({"wood_pickaxe": 1}, "stone", "path", 1.0),
    "coal": ({"wood_pickaxe": 1}, "coal", "path", 1.0),
    "iron": ({"stone_pickaxe": 1}, "iron", "path", 1.0),
    "diamond": ({"iron_pickaxe": 1}, "diamond", "path", 1.0),
    "water": ({}, "drink", "water", 1.0),
    "grass": ({}, "sapling", "grass", 0.1),
}
# what is placed: (items used, materials it may replace)
PLACE = {
    "stone": ({"stone": 1}, ("grass", "sand", "path", "water", "lava")),
    "table": ({"wood": 2}, ("grass", "sand", "path")),
    "furnace": ({"stone": 4}, ("grass", "sand", "path")),
    "plant": ({"sapling": 1}, ("grass",)),
}
# tool: (items used, materials needed within one cell)
MAKE = {
    "wood_pickaxe": ({"wood": 1}, ("table",)),
    "stone_pickaxe": ({"wood": 1, "stone": 1}, ("table",)),
    "iron_pickaxe": ({"wood": 1, "coal": 1, "iron": 1}, ("table", "furnace")),
    "wood_sword": ({"wood": 1}, ("table",)),
    "stone_sword": ({"wood": 1, "stone": 1}, ("table",)),
    "iron_sword": ({"wood": 1, "coal": 1, "iron": 1}, ("table", "furnace")),
}
DIRECTIONS = ((-1, 0), (1, 0), (0, -1), (0, 1))  # randint(0, 4) picks one


def daylight(step: int) -> float:
    progress = (step / 300) % 1 + 0.3
    return float(1 - np.abs(np.cos(np.pi * progress)) ** 3)


def chunk_of(x: int, y: int) -> int:
    return (x // CHUNK) * CHUNKS_PER_SIDE + y // CHUNK


def chunk_bounds(index: int) -> tuple[int, int, int, int]:
    cx, cy = divmod(index, CHUNKS_PER_SIDE)
    xmin, ymin = cx * CHUNK, cy * CHUNK
    return xmin, min(xmin + CHUNK, AREA), ymin, min(ymin + CHUNK, AREA)


def distance(a: tuple[int, int], b: tuple[int, int]) -> int:
    return abs(a[0] - b[0]) + abs(a[1] - b[1])


def sign(v: int) -> int:
    return (v > 0) - (v < 0)


def toward(source, target, long_axis: bool = True) -> tuple[int, int]:
    dx, dy = target[0] - source[0], target[1] - source[1]
    if abs(dx) > abs(dy) if long_axis else abs(dx) <= abs(dy):
        return (sign(dx), 0)
    return (0, sign(dy))


class Thing:
    """One object: the player or a creature, arrow or plant."""

    __slots__ = ("counter", "facing", "grown", "health", "kind", "pos", "removed")

    def __init__(self, kind: str, pos, health: int = 0, counter: int = 0, facing=(0, 0)):
        self.kind, self.pos, self.health = kind, (int(pos[0]), int(pos[1])), health
        self.counter, self.facing, self.grown, self.removed = counter, facing, 0, False

    def hurt(self, amount: int) -> None:
        self.health = max(0, self.health - amount)


class World:
    """One env's world: the map, the objects in list order, the cells they hold, the chunk
    keys in the order they were made."""

    def __init__(self, mat: np.ndarray, chunks: list[int]) -> None:
        self.mat = np.array(mat, dtype=np.int64)
        self.objects: list[Thing] = []
        self.at: dict[tuple[int, int], Thing] = {}
        self.chunks = list(chunks)

    def inside(self, pos) -> bool:
        return 0 <= pos[0] < AREA and 0 <= pos[1] < AREA

    def material(self, pos) -> str | None:
        if not self.inside(pos):
            return None
        return NAME.get(int(self.mat[pos[0], pos[1]]))

    def thing(self, pos) -> Thing | None:
        return self.at.get((int(pos[0]), int(pos[1]))) if self.inside(pos) else None

    def set_material(self, pos, name: str) -> None:
        self.mat[pos[0], pos[1]] = ID[name]

    def is_free(self, pos, materials=WALKABLE) -> bool:
        return self.thing(pos) is None and self.material(pos) in materials

    def _key(self, pos) -> None:
        chunk = chunk_of(*pos)
        if chunk not in self.chunks:
            self.chunks.append(chunk)

    def add(self, thing: Thing) -> None:
        self.objects.append(thing)
        self.at[thing.pos] = thing
        self._key(thing.pos)

    def remove(self, thing: Thing) -> None:
        if thing.removed:
            return
        del self.at[thing.pos]
        thing.removed = True

    def move(self, thing: Thing, direction, materials=WALKABLE) -> bool:
        """Object.move: True when the target was free, even for a removed object."""
        target = (thing.pos[0] + direction[0], thing.pos[1] + direction[1])
        if not self.is_free(target, materials):
            return False
        if not thing.removed:
            del self.at[thing.pos]
            self.at[target] = thing
            if chunk_of(*target) != chunk_of(*thing.pos):
                self._key(target)
            thing.pos = target
        return True

    def live(self) -> list[Thing]:
        return [thing for thing in self.objects if not thing.removed]

    def compact(self) -> None:
        self.objects = self.live()


def near_materials(world: World, pos) -> set[str | None]:
    """World.nearby(pos, 1)'s materials, with NumPy's slices: a start of -1 is empty."""
    x, y = pos
    region = world.mat[x - 1 : x + 2, y - 1 : y + 2]
    return {NAME.get(int(v)) for v in region.ravel()}


def within_update(player: Thing, thing: Thing) -> bool:
    return distance(player.pos, thing.pos) < UPDATE_RADIUS
