"""Hand-written known-good port: a test subject for the verifier, not model output.

What the agent is shown, as ids (Crafter's SemanticView numbering): the 9x7 cells around
the player, obs[x][y], each its material or the object standing there, 0 off the map; then
the 16 inventory counts."""

from __future__ import annotations

import numpy as np

from .player import Player
from .world import AREA, ITEMS, World

VIEW = (9, 7)
OBJECT_ID = {"player": 13, "cows": 14, "zombies": 15, "skeletons": 16, "arrows": 17}
OBJECT_ID["plants"] = 18
SIZE = VIEW[0] * VIEW[1] + len(ITEMS)


def observe(world: World, player: Player) -> np.ndarray:
    semantic = world.mat.copy()
    for thing in world.live():
        semantic[thing.pos] = OBJECT_ID[thing.kind]
    view = np.zeros(VIEW, np.uint8)
    px, py = player.pos
    for x in range(VIEW[0]):
        for y in range(VIEW[1]):
            cx, cy = px + x - VIEW[0] // 2, py + y - VIEW[1] // 2
            if 0 <= cx < AREA and 0 <= cy < AREA:
                view[x, y] = semantic[cx, cy]
    inventory = np.asarray([player.inventory[name] for name in ITEMS], np.uint8)
    return np.concatenate([view.ravel(), inventory])
