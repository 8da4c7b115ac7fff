"""Hand-written known-good port: a test subject for the verifier, not model output.

The player (objects.py's Player): its action, then its life stats, health, the clamp of
the inventory to 0..9, and waking when hurt."""

from __future__ import annotations

from .objects import Drawer
from .world import (
    ACHIEVEMENTS,
    ACTIONS,
    COLLECT,
    ITEMS,
    MAKE,
    MAX_ITEM,
    PLACE,
    WALKABLE,
    Thing,
    World,
    near_materials,
)

MOVES = {"left": (-1, 0), "right": (1, 0), "up": (0, -1), "down": (0, 1)}


class Player(Thing):
    """The player: a Thing whose health is its inventory's."""

    def __init__(self, pos, facing) -> None:
        self.inventory = {name: 0 for name in ITEMS}
        self.achievements = {name: 0 for name in ACHIEVEMENTS}
        self.sleeping = False
        self.last_health = 0
        self.hunger = self.thirst = self.fatigue = self.recover = 0.0
        super().__init__("player", pos, facing=facing)

    @property  # type: ignore[override]
    def health(self) -> int:
        return self.inventory["health"]

    @health.setter
    def health(self, value: int) -> None:
        self.inventory["health"] = max(0, value)


def update_player(world: World, player: Player, action: int, draw: Drawer) -> None:
    target = (player.pos[0] + player.facing[0], player.pos[1] + player.facing[1])
    material, thing = world.material(target), world.thing(target)
    name = ACTIONS[action]
    if player.sleeping:
        if player.inventory["energy"] < MAX_ITEM:
            name = "sleep"
        else:
            player.sleeping = False
            player.achievements["wake_up"] += 1
    if name.startswith("move_"):
        player.facing = MOVES[name[len("move_") :]]
        world.move(player, player.facing, (*WALKABLE, "lava"))
        if world.material(player.pos) == "lava":
            player.health = 0
    elif name == "do" and thing is not None:
        _hit(world, player, thing)
    elif name == "do":
        _collect(world, player, target, material, draw)
    elif name == "sleep":
        if player.inventory["energy"] < MAX_ITEM:
            player.sleeping = True
    elif name.startswith("place_"):
        _place(world, player, name[len("place_") :], target, material, thing)
    elif name.startswith("make_"):
        _make(world, player, name[len("make_") :])
    _life_stats(player)
    _health(player)
    for item, amount in player.inventory.items():
        player.inventory[item] = max(0, min(amount, MAX_ITEM))
    if player.health < player.last_health:
        player.sleeping = False
    player.last_health = player.health


def _hit(world: World, player: Player, thing: Thing) -> None:
    inv = player.inventory
    damage = max(1, inv["wood_sword"] and 2, inv["stone_sword"] and 3, inv["iron_sword"] and 5)
    if thing.kind == "plants":
        if thing.grown > 300:
            thing.grown = 0
            inv["food"] += 4
            player.achievements["eat_plant"] += 1
    elif thing.kind in ("zombies", "skeletons", "cows"):
        thing.hurt(damage)
        if thing.health <= 0:
            if thing.kind == "zombies":
                player.achievements["defeat_zombie"] += 1
            elif thing.kind == "skeletons":
                player.achievements["defeat_skeleton"] += 1
            else:
                inv["food"] += 6
                player.achievements["eat_cow"] += 1
                player.hunger = 0.0


def _collect(world: World, player: Player, target, material, draw: Drawer) -> None:
    if material == "water":
        player.thirst = 0.0
    if material not in COLLECT:
        return
    needs, item, leaves, probability = COLLECT[material]
    if any(player.inventory[k] < v for k, v in needs.items()):
        return
    world.set_material(target, leaves)
    if draw.uniform() <= probability:
        player.inventory[item] += 1
        player.achievements[f"collect_{item}"] += 1


def _place(world: World, player: Player, name: str, target, material, thing) -> None:
    if thing is not None:
        return
    uses, where = PLACE[name]
    if material not in where:
        return
    if any(player.inventory[k] < v for k, v in uses.items()):
        return
    for item, amount in uses.items():
        player.inventory[item] -= amount
    if name == "plant":
        world.add(Thing("plants", target, health=1))
    else:
        world.set_material(target, name)
    player.achievements[f"place_{name}"] += 1


def _make(world: World, player: Player, name: str) -> None:
    uses, nearby = MAKE[name]
    around = near_materials(world, player.pos)
    if not all(util in around for util in nearby):
        return
    if any(player.inventory[k] < v for k, v in uses.items()):
        return
    for item, amount in uses.items():
        player.inventory[item] -= amount
    player.inventory[name] += 1
    player.achievements[f"make_{name}"] += 1


def _life_stats(player: Player) -> None:
    player.hunger += 0.5 if player.sleeping else 1
    if player.hunger > 25:
        player.hunger = 0.0
        player.inventory["food"] -= 1
    player.thirst += 0.5 if player.sleeping else 1
    if player.thirst > 20:
        player.thirst = 0.0
        player.inventory["drink"] -= 1
    if player.sleeping:
        player.fatigue = min(player.fatigue - 1, 0)
    else:
        player.fatigue += 1
    if player.fatigue < -10:
        player.fatigue = 0.0
        player.inventory["energy"] += 1
    if player.fatigue > 30:
        player.fatigue = 0.0
        player.inventory["energy"] -= 1


def _health(player: Player) -> None:
    inv = player.inventory
    if inv["food"] > 0 and inv["drink"] > 0 and (inv["energy"] > 0 or player.sleeping):
        player.recover += 2 if player.sleeping else 1
    else:
        player.recover -= 0.5 if player.sleeping else 1
    if player.recover > 25:
        player.recover = 0.0
        player.health += 1
    if player.recover < -15:
        player.recover = 0.0
        player.health -= 1
