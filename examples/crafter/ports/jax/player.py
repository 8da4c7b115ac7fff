"""Hand-written known-good port: a test subject for the verifier, not model output.

The player's update (objects.py's Player.update): its action (the one it is given, or sleep
while asleep and tired), then its life stats, health, the clamp of the inventory to 0..9 and
waking when hurt. Every action's effect is worked out and the one taken is kept."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .world import (
    ACHIEVED,
    AREA,
    COLLECT_ACHIEVED,
    COLLECT_CHANCE,
    COLLECT_GIVES,
    COLLECT_LEAVES,
    COLLECT_NEEDS,
    COLLECTABLE,
    COW,
    DIRECTIONS,
    FURNACE,
    ITEM,
    LAVA,
    MAKE_ACHIEVED,
    MAKE_FURNACE,
    MAKE_GIVES,
    MAKE_USES,
    MAX_ITEM,
    NONE,
    PLACE_ACHIEVED,
    PLACE_USES,
    PLACE_WHERE,
    PLACED,
    PLANT,
    PLAYER,
    SKELETON,
    TABLE,
    WATER,
    ZOMBIE,
    World,
    add_object,
    at,
    has,
    move_player,
    set_cell,
)

NOOP, MOVE_LEFT, MOVE_DOWN, DO, SLEEP, PLACE_STONE, PLACE_PLANT = 0, 1, 4, 5, 6, 7, 10
MAKE_WOOD_PICKAXE = 11


def _achieve(achievements, index, go) -> jax.Array:
    return achievements.at[index].add(go.astype(jnp.int32))


def _near(w: World) -> tuple[jax.Array, jax.Array]:
    """World.nearby(pos, 1)'s materials: a table, a furnace within one cell. Crafter slices
    the map from x - 1: at x = 0 (or y = 0) that start is -1 and the region is empty."""
    # The 3x3 cells gathered (a pad would copy the whole map); off the map reads as none.
    xs = w.player_x - 1 + jnp.arange(3)[:, None]
    ys = w.player_y - 1 + jnp.arange(3)[None, :]
    on = (xs >= 0) & (xs < AREA) & (ys >= 0) & (ys < AREA)
    region = jnp.where(on, w.mat[jnp.clip(xs, 0, AREA - 1), jnp.clip(ys, 0, AREA - 1)], NONE)
    seen = (w.player_x > 0) & (w.player_y > 0)
    return seen & (region == TABLE).any(), seen & (region == FURNACE).any()


def _do(w: World, go, u, tx, ty, material, code) -> World:
    """`do`, when `go`: hit (or eat) the object ahead, else collect the material ahead."""
    inv, ach = w.inventory, w.achievements
    other = jnp.clip(code - 1, 0, w.kind.shape[0] - 1)
    thing = go & (code > 0) & (code != PLAYER)
    kind = w.kind[other]
    # An object ahead: a ripe plant is eaten, a creature hit.
    ripe = thing & (kind == PLANT) & (w.grown[other] > 300)
    swords = inv[ITEM["wood_sword"] :]  # wood, stone, iron
    damage = jnp.max(jnp.where(swords > 0, jnp.array([2, 3, 5]), 1))
    struck = thing & (kind <= COW)
    health = jnp.where(struck, jnp.maximum(w.health[other] - damage, 0), w.health[other])
    killed = struck & (health <= 0)
    eats_cow = killed & (kind == COW)
    inv = inv.at[ITEM["food"]].add(jnp.where(ripe, 4, 0) + jnp.where(eats_cow, 6, 0))
    ach = _achieve(ach, ACHIEVED["eat_plant"], ripe)
    ach = _achieve(ach, ACHIEVED["defeat_zombie"], killed & (kind == ZOMBIE))
    ach = _achieve(ach, ACHIEVED["defeat_skeleton"], killed & (kind == SKELETON))
    ach = _achieve(ach, ACHIEVED["eat_cow"], eats_cow)
    w = w._replace(
        health=w.health.at[other].set(health),
        grown=w.grown.at[other].set(jnp.where(ripe, 0, w.grown[other])),
        hunger=jnp.where(eats_cow, 0.0, w.hunger),
    )
    # No object: collect the material, when the tool it needs is held.
    free = go & (code == 0)
    needs = COLLECT_NEEDS[material]
    held = (needs < 0) | (inv[jnp.maximum(needs, 0)] >= 1)
    collects = free & has(COLLECTABLE, material) & held
    gets = collects & (u <= COLLECT_CHANCE[material])
    item = COLLECT_GIVES[material]
    inv = inv.at[item].add(gets.astype(jnp.int32))
    ach = _achieve(ach, COLLECT_ACHIEVED[item], gets)
    return w._replace(
        inventory=inv,
        achievements=ach,
        mat=set_cell(w.mat, tx, ty, COLLECT_LEAVES[material], collects),
        thirst=jnp.where(free & (material == WATER), 0.0, w.thirst),
    )


def _place(w: World, go, which, tx, ty, material, code) -> World:
    uses = PLACE_USES[which]
    ok = go & (code == 0) & has(PLACE_WHERE[which], material) & (w.inventory >= uses).all()
    placed = PLACED[which]
    w = w._replace(
        inventory=w.inventory - jnp.where(ok, uses, 0),
        achievements=_achieve(w.achievements, PLACE_ACHIEVED[which], ok),
        mat=set_cell(w.mat, tx, ty, placed, ok & (placed >= 0)),
    )
    return add_object(w, ok & (placed < 0), PLANT, tx, ty, health=1)


def _make(w: World, go, which) -> World:
    table, furnace = _near(w)
    uses = MAKE_USES[which]
    ok = go & table & (furnace | ~MAKE_FURNACE[which]) & (w.inventory >= uses).all()
    inv = w.inventory - jnp.where(ok, uses, 0)
    inv = inv.at[MAKE_GIVES[which]].add(ok.astype(jnp.int32))
    achievements = _achieve(w.achievements, MAKE_ACHIEVED[which], ok)
    return w._replace(inventory=inv, achievements=achievements)


def update_player(w: World, action, u) -> World:
    tx, ty = w.player_x + w.facing[0], w.player_y + w.facing[1]
    material, code = at(w, tx, ty)
    tired = w.inventory[ITEM["energy"]] < MAX_ITEM
    wakes = w.sleeping & ~tired
    action = jnp.where(w.sleeping & tired, SLEEP, action)
    w = w._replace(
        sleeping=w.sleeping & tired,
        achievements=_achieve(w.achievements, ACHIEVED["wake_up"], wakes),
    )
    # Each action's rule runs in turn, its every write masked by whether it is the one
    # taken: the others leave the world as it was (no whole-world select per action, the
    # maps included). A move turns the player even when the cell is taken; lava kills
    # whoever steps on it.
    moving = (action >= MOVE_LEFT) & (action <= MOVE_DOWN)
    d = DIRECTIONS[jnp.clip(action - MOVE_LEFT, 0, 3)]
    w = move_player(w._replace(facing=jnp.where(moving, d, w.facing)), d[0], d[1], moving)
    on_lava = moving & (at(w, w.player_x, w.player_y)[0] == LAVA)
    w = w._replace(inventory=w.inventory.at[0].set(jnp.where(on_lava, 0, w.inventory[0])))
    w = _do(w, action == DO, u, tx, ty, material, code)
    w = w._replace(sleeping=w.sleeping | ((action == SLEEP) & tired))
    placing = (action >= PLACE_STONE) & (action <= PLACE_PLANT)
    w = _place(w, placing, jnp.clip(action - PLACE_STONE, 0, 3), tx, ty, material, code)
    w = _make(w, action >= MAKE_WOOD_PICKAXE, jnp.clip(action - MAKE_WOOD_PICKAXE, 0, 5))
    w = _life_stats(w)
    w = _health(w)
    w = w._replace(inventory=jnp.clip(w.inventory, 0, MAX_ITEM))
    hurt = w.inventory[0] < w.last_health
    return w._replace(sleeping=w.sleeping & ~hurt, last_health=w.inventory[0])


def _life_stats(w: World) -> World:
    inv, sleeping = w.inventory, w.sleeping
    hunger = w.hunger + jnp.where(sleeping, 0.5, 1.0)
    starving = hunger > 25
    thirst = w.thirst + jnp.where(sleeping, 0.5, 1.0)
    parched = thirst > 20
    fatigue = jnp.where(sleeping, jnp.minimum(w.fatigue - 1, 0.0), w.fatigue + 1)
    rested, tired = fatigue < -10, fatigue > 30
    energy = rested.astype(jnp.int32) - tired.astype(jnp.int32)
    inv = inv.at[ITEM["food"]].add(-starving.astype(jnp.int32))
    inv = inv.at[ITEM["drink"]].add(-parched.astype(jnp.int32))
    inv = inv.at[ITEM["energy"]].add(energy)
    return w._replace(
        inventory=inv,
        hunger=jnp.where(starving, 0.0, hunger),
        thirst=jnp.where(parched, 0.0, thirst),
        fatigue=jnp.where(rested | tired, 0.0, fatigue),
    )


def _health(w: World) -> World:
    inv = w.inventory
    fed = (inv[ITEM["food"]] > 0) & (inv[ITEM["drink"]] > 0)
    fed = fed & ((inv[ITEM["energy"]] > 0) | w.sleeping)
    recover = w.recover + jnp.where(
        fed, jnp.where(w.sleeping, 2.0, 1.0), jnp.where(w.sleeping, -0.5, -1.0)
    )
    up, down = recover > 25, recover < -15
    health = jnp.maximum(inv[0] + up.astype(jnp.int32) - down.astype(jnp.int32), 0)
    return w._replace(inventory=inv.at[0].set(health), recover=jnp.where(up | down, 0.0, recover))
