"""Hand-written known-good port: a test subject for the verifier, not model output.

The noise tape and the updates of Crafter's creatures, arrows and plants (objects.py's
Cow, Zombie, Skeleton, Arrow, Plant), each drawing from its own row of the noise."""

from __future__ import annotations

import math

import numpy as np

from .world import ARROW_WALKABLE, DIRECTIONS, Thing, World, distance, toward

ZOMBIES, SKELETONS, COWS = 96, 56, 88
CHUNKS, BALANCED = 36, 3
WIDTH = {"player": 1, "zombies": 3, "skeletons": 6, "cows": 2, "balance": 2}
COUNT = {"player": 1, "zombies": ZOMBIES, "skeletons": SKELETONS, "cows": COWS}
COUNT["balance"] = CHUNKS * BALANCED
OFFSET: dict[str, int] = {}
_at = 0
for _site, _width in WIDTH.items():
    OFFSET[_site] = _at
    _at += _width * COUNT[_site]
NOISE = _at


class Tape:
    """One step's noise: each site reads its own row, in the order its code draws."""

    def __init__(self, noise: np.ndarray) -> None:
        self.noise = noise
        self.used: dict[int, int] = {}

    def _next(self, row: int, width: int) -> float:
        at = self.used.get(row, 0)
        if at >= width:
            raise IndexError(f"a site drew more than its {width} numbers")
        self.used[row] = at + 1
        return float(self.noise[row + at])

    def draw(self, kind: str, index: int) -> float:
        if index >= COUNT[kind]:
            raise IndexError(f"{kind}[{index}] beyond the noise's rows")
        return self._next(OFFSET[kind] + index * WIDTH[kind], WIDTH[kind])

    def balance(self, chunk: int, kind: int) -> float:
        row = OFFSET["balance"] + (chunk * BALANCED + kind) * WIDTH["balance"]
        return self._next(row, WIDTH["balance"])


def pick(u: float, n: int) -> int:
    """randint(0, n) from its number in [0, 1)."""
    return min(math.floor(u * n), n - 1)


class Drawer:
    """One object's draws: `uniform()` and `randint(0, n)` from its row."""

    def __init__(self, tape: Tape, kind: str, index: int) -> None:
        self.tape, self.kind, self.index = tape, kind, index

    def uniform(self) -> float:
        return self.tape.draw(self.kind, self.index)

    def randint(self, n: int) -> int:
        return pick(self.tape.draw(self.kind, self.index), n)


def update_cow(world: World, cow: Thing, draw: Drawer) -> None:
    if cow.health <= 0:
        world.remove(cow)
    if draw.uniform() < 0.5:
        world.move(cow, DIRECTIONS[draw.randint(4)])


def update_zombie(world: World, zombie: Thing, player: Thing, draw: Drawer) -> None:
    if zombie.health <= 0:
        world.remove(zombie)
    if distance(zombie.pos, player.pos) <= 8 and draw.uniform() < 0.9:
        world.move(zombie, toward(zombie.pos, player.pos, draw.uniform() < 0.8))
    else:
        world.move(zombie, DIRECTIONS[draw.randint(4)])
    if distance(zombie.pos, player.pos) <= 1:
        if zombie.counter:
            zombie.counter -= 1
        else:
            player.hurt(7 if player.sleeping else 2)
            zombie.counter = 5


def update_skeleton(world: World, skeleton: Thing, player: Thing, draw: Drawer) -> None:
    if skeleton.health <= 0:
        world.remove(skeleton)
    skeleton.counter = max(0, skeleton.counter - 1)
    dist = distance(skeleton.pos, player.pos)
    if dist <= 3:
        away = toward(skeleton.pos, player.pos, draw.uniform() < 0.6)
        if world.move(skeleton, (-away[0], -away[1])):
            return
    if dist <= 5 and draw.uniform() < 0.5:
        _shoot(world, skeleton, toward(skeleton.pos, player.pos))
    elif dist <= 8 and draw.uniform() < 0.3:
        world.move(skeleton, toward(skeleton.pos, player.pos, draw.uniform() < 0.6))
    elif draw.uniform() < 0.2:
        world.move(skeleton, DIRECTIONS[draw.randint(4)])


def _shoot(world: World, skeleton: Thing, direction) -> None:
    if skeleton.counter > 0 or direction == (0, 0):
        return
    pos = (skeleton.pos[0] + direction[0], skeleton.pos[1] + direction[1])
    if world.is_free(pos, ARROW_WALKABLE):
        world.add(Thing("arrows", pos, facing=direction))
        skeleton.counter = 4


def update_arrow(world: World, arrow: Thing) -> None:
    target = (arrow.pos[0] + arrow.facing[0], arrow.pos[1] + arrow.facing[1])
    material, other = world.material(target), world.thing(target)
    if other is not None:
        other.hurt(2)
        world.remove(arrow)
    elif material not in ARROW_WALKABLE:
        world.remove(arrow)
        if material in ("table", "furnace"):
            world.set_material(target, "path")
    else:
        world.move(arrow, arrow.facing, ARROW_WALKABLE)


def update_plant(world: World, plant: Thing) -> None:
    plant.grown += 1
    for dx, dy in DIRECTIONS:
        other = world.thing((plant.pos[0] + dx, plant.pos[1] + dy))
        if other is not None and other.kind in ("zombies", "skeletons", "cows"):
            plant.hurt(1)
            break
    if plant.health <= 0:
        world.remove(plant)
