"""Hand-written known-good port: a test subject for the verifier, not model output.

Env.step: the clock, each object's update in the world's list order (those within 18 of
the player), every 10th step the balance of zombies, skeletons and cows chunk by chunk,
then the reward, the unlocks and the ends."""

from __future__ import annotations

import numpy as np

from . import objects
from .objects import Drawer, Tape, pick
from .player import Player, update_player
from .world import (
    ACHIEVEMENTS,
    ID,
    LENGTH,
    Thing,
    World,
    chunk_bounds,
    daylight,
    distance,
    within_update,
)

SITES = ("zombies", "skeletons", "cows")
# kind: (material, spawn distance, despawn distance, spawn p, despawn p, health)
BALANCE = {
    "zombies": ("grass", 6, 0, 0.3, 0.4, 5),
    "skeletons": ("path", 7, 7, 0.1, 0.1, 3),
    "cows": ("grass", 5, 5, 0.01, 0.1, 3),
}


def _targets(kind: str, space: int, light: float) -> tuple[float, float]:
    if kind == "zombies":
        return (0 if space < 50 else 3.5 - 3 * light), 3.5 - 3 * light
    if kind == "skeletons":
        return (0 if space < 6 else 1), 2
    return (0 if space < 30 else 1), 1.5 + light


class Game:
    """One env: its world, its player and Env's own counters."""

    def __init__(self, world: World, player: Player) -> None:
        self.world, self.player = world, player
        self.step_count = 0
        self.last_health = 0
        self.unlocked: set[str] = set()
        self.daylight = 0.0

    def step(self, action: int, noise: np.ndarray) -> tuple[float, bool, bool]:
        world, player, tape = self.world, self.player, Tape(noise)
        self.step_count += 1
        self.daylight = daylight(self.step_count)
        counts = dict.fromkeys(SITES, 0)
        for thing in world.live():
            index = counts.get(thing.kind, 0)
            if thing.kind in counts:
                counts[thing.kind] += 1
            if not within_update(player, thing):
                continue
            if thing is player:
                update_player(world, player, action, Drawer(tape, "player", 0))
            elif thing.kind == "cows":
                objects.update_cow(world, thing, Drawer(tape, "cows", index))
            elif thing.kind == "zombies":
                objects.update_zombie(world, thing, player, Drawer(tape, "zombies", index))
            elif thing.kind == "skeletons":
                objects.update_skeleton(world, thing, player, Drawer(tape, "skeletons", index))
            elif thing.kind == "arrows":
                objects.update_arrow(world, thing)
            else:
                objects.update_plant(world, thing)
        if self.step_count % 10 == 0:
            for chunk in list(world.chunks):
                for kind_index, kind in enumerate(SITES):
                    self._balance(tape, chunk, kind_index, kind)
        world.compact()
        reward = (player.health - self.last_health) / 10
        self.last_health = player.health
        new = {n for n in ACHIEVEMENTS if player.achievements[n] > 0 and n not in self.unlocked}
        if new:
            self.unlocked |= new
            reward += 1.0
        dead = player.health <= 0
        over = self.step_count >= LENGTH
        return float(reward), bool(dead), bool(over and not dead)

    def _balance(self, tape: Tape, chunk: int, kind_index: int, kind: str) -> None:
        world, player = self.world, self.player
        xmin, xmax, ymin, ymax = chunk_bounds(chunk)
        material, span, despan, spawn_p, despawn_p, health = BALANCE[kind]
        creatures = [
            t
            for t in world.live()
            if t.kind == kind and xmin <= t.pos[0] < xmax and ymin <= t.pos[1] < ymax
        ]
        mask = world.mat[xmin:xmax, ymin:ymax] == ID[material]
        low, high = _targets(kind, int(mask.sum()), self.daylight)
        if len(creatures) < int(low) and tape.balance(chunk, kind_index) < spawn_p:
            xs, ys = np.nonzero(mask)
            i = pick(tape.balance(chunk, kind_index), len(xs))
            pos = (int(xs[i]) + xmin, int(ys[i]) + ymin)
            if world.thing(pos) is None and distance(player.pos, pos) >= span:
                world.add(Thing(kind, pos, health=health))
        elif len(creatures) > int(high) and tape.balance(chunk, kind_index) < despawn_p:
            victim = creatures[pick(tape.balance(chunk, kind_index), len(creatures))]
            if distance(player.pos, victim.pos) >= despan:
                world.remove(victim)
