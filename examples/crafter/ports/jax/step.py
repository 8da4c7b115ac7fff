"""Hand-written known-good port: a test subject for the verifier, not model output.

Env.step for one env: the clock, the player's update, then each object's in the world's
list order (one loop over the slots, since a creature's move depends on where the ones
before it went), every 10th step the balance of zombies, skeletons and cows chunk by chunk,
then the reward, the unlocks and the ends. The objects arrive as one list per kind, each
record starting with its `order`, its place in the world's list; they are laid out as one
table in that order for the step and given back per kind, orders counted afresh."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .objects import OFFSET, WIDTH, pick, update_object
from .player import update_player
from .world import (
    AREA,
    CAPACITY,
    CHUNK,
    CHUNKS_PER_SIDE,
    COW,
    GRASS,
    KINDS,
    PATH,
    PLAYER,
    SKELETON,
    SLOTS,
    ZOMBIE,
    World,
    add_object,
    daylight,
    distance,
    set_cell,
)

# Each kind's record after `order, x, y`, as the world's table names its fields.
FIELDS = {
    "zombies": ("health", "counter"),
    "skeletons": ("health", "counter"),
    "cows": ("health",),
    "arrows": ("fx", "fy"),
    "plants": ("health", "grown"),
}
_TABLE = ("kind", "x", "y", "health", "counter", "fx", "fy", "grown", "site")
# kind: (material, spawn distance, despawn distance, spawn chance, despawn chance, health)
BALANCE = (
    (GRASS, 6, 0, 0.3, 0.4, 5),
    (PATH, 7, 7, 0.1, 0.1, 3),
    (GRASS, 5, 5, 0.01, 0.1, 3),
)


def unpack(lists: dict, lengths: dict) -> tuple[dict, jax.Array]:
    """The kinds' lists as one table in list order (stable in the kinds' order for equal
    orders, as the reference writes them). -> (fields [SLOTS], objects in use)."""
    columns: dict[str, list] = {name: [] for name in (*_TABLE, "order", "used")}
    for k, name in enumerate(KINDS):
        records, n = lists[name], lengths[name]
        rows = records.shape[0]
        values = {f: jnp.zeros(rows, jnp.int32) for f in _TABLE}
        values.update(kind=jnp.full(rows, k, jnp.int32), x=records[:, 1], y=records[:, 2])
        for i, field in enumerate(FIELDS[name]):
            values[field] = records[:, 3 + i]
        for field in _TABLE:
            columns[field].append(values[field])
        columns["order"].append(records[:, 0])
        columns["used"].append(jnp.arange(rows) < n)
    table = {name: jnp.concatenate(parts) for name, parts in columns.items()}
    used = table.pop("used")
    key = jnp.where(used, table.pop("order"), jnp.iinfo(jnp.int32).max)
    sort = jnp.argsort(key, stable=True)
    count = used.sum().astype(jnp.int32)
    room = SLOTS - sort.shape[0]
    fields = {f: jnp.pad(table[f][sort], (0, room)) for f in _TABLE}
    alive = jnp.pad(used[sort], (0, room))
    # Each object's place among its kind at the start: its row of the noise.
    same = fields["kind"][:, None] == jnp.arange(len(KINDS))[None, :]
    before = jnp.cumsum(same & alive[:, None], axis=0) - 1
    fields["site"] = jnp.take_along_axis(before, fields["kind"][:, None], axis=1)[:, 0]
    return fields | {"alive": alive}, count


def occupancy(x, y, alive, px, py) -> jax.Array:
    """-> int32[64, 64]: slot + 1 on each object's cell, PLAYER on the player's, else 0."""
    codes = jnp.where(alive, jnp.arange(1, x.shape[0] + 1), 0)
    omap = jnp.zeros((AREA, AREA), jnp.int32)
    # A cell off the table's objects (x past the map) is dropped, not clipped onto the map.
    omap = omap.at[jnp.where(alive, x, AREA), y].max(codes, mode="drop")
    return omap.at[px, py].set(PLAYER)


def pack(w: World) -> tuple[dict, dict]:
    """The live objects per kind, in list order, orders counted afresh.
    -> (records per kind [capacity, F], lengths)."""
    order = jnp.cumsum(w.alive) - 1
    table = w._asdict()
    lists, lengths = {}, {}
    for k, name in enumerate(KINDS):
        mine = w.alive & (w.kind == k)
        place = jnp.where(mine, jnp.cumsum(mine) - 1, CAPACITY[name])
        columns = [order, w.x, w.y] + [table[f] for f in FIELDS[name]]
        records = jnp.stack(columns, axis=1).astype(jnp.int32)
        empty = jnp.zeros((CAPACITY[name], len(columns)), jnp.int32)
        lists[name] = empty.at[place].set(records, mode="drop")
        lengths[name] = jnp.minimum(mine.sum(), CAPACITY[name]).astype(jnp.int32)
    return lists, lengths


def objects_update(w: World, count, noise) -> World:
    """Each object at the step's start, in list order (those added meanwhile wait)."""
    return jax.lax.fori_loop(0, count, lambda s, w: update_object(w, s, noise), w)


def _bounds(chunk) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array]:
    xmin, ymin = (chunk // CHUNKS_PER_SIDE) * CHUNK, (chunk % CHUNKS_PER_SIDE) * CHUNK
    return xmin, jnp.minimum(xmin + CHUNK, AREA), ymin, jnp.minimum(ymin + CHUNK, AREA)


def _targets(k: int, space, light) -> tuple[jax.Array, jax.Array]:
    """The chunk's (fewest, most) of kind k, before int()."""
    if k == ZOMBIE:
        most = 3.5 - 3 * light
        return jnp.where(space < 50, 0.0, most), most
    if k == SKELETON:
        return jnp.where(space < 6, 0.0, 1.0), jnp.float32(2.0)
    return jnp.where(space < 30, 0.0, 1.0), 1.5 + light


def _balance_kind(w: World, chunk, k: int, noise, light) -> World:
    material, span, despan, spawn_p, despawn_p, health = BALANCE[k]
    xmin, xmax, ymin, ymax = _bounds(chunk)
    row = OFFSET["balance"] + (chunk * 3 + k) * WIDTH["balance"]
    u0, u1 = noise[row], noise[row + 1]
    inside = (w.x >= xmin) & (w.x < xmax) & (w.y >= ymin) & (w.y < ymax)
    mine = w.alive & (w.kind == k) & inside
    count = mine.sum()
    # The chunk's cells of the material, x outer and y inner (NumPy's order of a mask).
    region = jax.lax.dynamic_slice(jnp.pad(w.mat, (0, CHUNK)), (xmin, ymin), (CHUNK, CHUNK))
    cells = (region == material).ravel()
    space = cells.sum()
    fewest, most = _targets(k, space, light)
    spawns = (count < fewest.astype(jnp.int32)) & (u0 < spawn_p)
    i = pick(u1, jnp.maximum(space, 1))
    flat = jnp.argmax(jnp.cumsum(cells) > i)
    sx, sy = xmin + flat // CHUNK, ymin + flat % CHUNK
    free = w.omap[jnp.minimum(sx, AREA - 1), jnp.minimum(sy, AREA - 1)] == 0
    spawns = spawns & free & (distance(w.player_x, w.player_y, sx, sy) >= span)
    w = add_object(w, spawns, k, sx, sy, health=health)
    # Too many: one of them, picked in list order, goes if far enough from the player.
    culls = ~(count < fewest.astype(jnp.int32)) & (count > most.astype(jnp.int32))
    culls = culls & (u0 < despawn_p)
    victim = jnp.argmax(jnp.cumsum(mine) > pick(u1, jnp.maximum(count, 1)))
    vx, vy = w.x[victim], w.y[victim]
    culls = culls & (distance(w.player_x, w.player_y, vx, vy) >= despan)
    return w._replace(
        alive=w.alive.at[victim].set(w.alive[victim] & ~culls),
        omap=set_cell(w.omap, vx, vy, 0, culls),
    )


def balance(w: World, noise, light, due) -> World:
    """Every 10th step: each chunk key, in the order made, balances zombies, skeletons and
    cows in turn."""

    def chunk(c, w):
        for k in (ZOMBIE, SKELETON, COW):
            w = _balance_kind(w, w.chunks[c], k, noise, light)
        return w

    return jax.lax.fori_loop(0, jnp.where(due, w.nchunks, 0), chunk, w)


def advance(w: World, count, action, noise, step) -> tuple[World, jax.Array]:
    """The world after one step's updates and balance. -> (world, daylight)."""
    light = daylight(step)
    w = update_player(w, action, noise[0])
    w = objects_update(w, count, noise)
    return balance(w, noise, light, step % 10 == 0), light
