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
    UPDATE_RADIUS,
    ZOMBIE,
    World,
    add_object,
    at,
    daylight,
    distance,
    ranks,
    running,
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
# Objects within reach updated as rows of their own; a world with more walks its table.
NEAR = 24
# kind: (material, spawn distance, despawn distance, spawn chance, despawn chance, health)
BALANCE = (
    (GRASS, 6, 0, 0.3, 0.4, 5),
    (PATH, 7, 7, 0.1, 0.1, 3),
    (GRASS, 5, 5, 0.01, 0.1, 3),
)


def _sorted(table: dict, used, key) -> dict:
    """The table in list order by a stable sort of the keys (any orders the state holds)."""
    sort = jnp.argsort(key, stable=True)
    room = SLOTS - sort.shape[0]
    fields = {f: jnp.pad(table[f][sort], (0, room)) for f in _TABLE}
    alive = jnp.pad(used[sort], (0, room))
    # Each object's place among its kind at the start: its row of the noise.
    same = fields["kind"][:, None] == jnp.arange(len(KINDS))[None, :]
    before = jnp.cumsum(same & alive[:, None], axis=0) - 1
    fields["site"] = jnp.take_along_axis(before, fields["kind"][:, None], axis=1)[:, 0]
    return fields | {"alive": alive}


def unpack(lists: dict, lengths: dict) -> tuple[dict, jax.Array]:
    """The kinds' lists as one table in list order (stable in the kinds' order for equal
    orders, as the reference writes them). -> (fields [SLOTS], objects in use).

    A state this port made (or Crafter's, read) numbers its objects 0 .. count - 1, each
    kind's list in that order: then each record's order is its slot and its index its place
    among its kind, with no sort (on CPU a sort runs a comparison at a time, the largest
    part of a step). Any other state is sorted, in a loop run once for it and not at all
    for the rest (under `vmap` only in a batch holding one)."""
    columns: dict[str, list] = {name: [] for name in (*_TABLE, "order", "used", "next")}
    last = jnp.iinfo(jnp.int32).max
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
        # The next record's order in the kind's list (none after its last).
        ahead = jnp.roll(records[:, 0], -1)
        columns["next"].append(jnp.where(jnp.arange(rows) + 1 < n, ahead, last))
    table = {name: jnp.concatenate(parts) for name, parts in columns.items()}
    used = table.pop("used")
    key = jnp.where(used, table.pop("order"), jnp.iinfo(jnp.int32).max)
    count = used.sum().astype(jnp.int32)
    within = jnp.concatenate([jnp.arange(lists[name].shape[0]) for name in KINDS])
    rising = (~used | (table.pop("next") > key)).all()
    numbered = (~used | ((key >= 0) & (key < count))).all()
    slot = jnp.where(used & (key >= 0) & (key < count), key, SLOTS)
    once = (jnp.zeros(SLOTS, jnp.int32).at[slot].add(1, mode="drop") <= 1).all()
    ordered = rising & numbered & once
    fields = {f: jnp.zeros(SLOTS, jnp.int32).at[slot].set(table[f], mode="drop") for f in _TABLE}
    fields["site"] = jnp.zeros(SLOTS, jnp.int32).at[slot].set(within, mode="drop")
    fields["alive"] = jnp.zeros(SLOTS, bool).at[slot].set(used, mode="drop")

    def sort(i, fields):
        # Reads the counter: a loop-invariant body would be hoisted out and run every step.
        return _sorted(table, used, jnp.where(i == 0, key, last))

    return jax.lax.fori_loop(0, jnp.where(ordered, 0, 1), sort, fields), count


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
    mines = [w.alive & (w.kind == k) for k in range(len(KINDS))]
    order, *places = ranks(w.alive, *mines)
    order = order - 1
    table = w._asdict()
    lists, lengths = {}, {}
    for k, name in enumerate(KINDS):
        mine = mines[k]
        place = jnp.where(mine, places[k] - 1, CAPACITY[name])
        columns = [order, w.x, w.y] + [table[f] for f in FIELDS[name]]
        records = jnp.stack(columns, axis=1).astype(jnp.int32)
        empty = jnp.zeros((CAPACITY[name], len(columns)), jnp.int32)
        lists[name] = empty.at[place].set(records, mode="drop")
        lengths[name] = jnp.minimum(mine.sum(), CAPACITY[name]).astype(jnp.int32)
    return lists, lengths


def _rows(w: World, count) -> tuple[World, jax.Array, jax.Array]:
    """The objects within reach of any cell the updates can touch, as NEAR rows in list
    order, then NEAR empty rows for the arrows they may shoot; no `omap` (a cell's object
    is found among the rows) and no writes to the material map (`broke` keeps them).
    -> (rows, their slots, how many there are)."""
    # An object updated stands within UPDATE_RADIUS - 1 of the player and looks one cell
    # away: every object it can meet stands within UPDATE_RADIUS.
    # The player's plant (added this step, so not updated) stands among them too.
    reach = distance(w.x, w.y, w.player_x, w.player_y) <= UPDATE_RADIUS
    local = w.alive & reach
    n = local.sum()
    place = jnp.where(local, running(local.astype(jnp.int32)) - 1, NEAR)
    listed = jnp.zeros(NEAR, jnp.int32).at[place].set(jnp.arange(SLOTS), mode="drop")
    used = jnp.arange(NEAR) < n
    table = w._asdict()

    def rows(name):
        field = table[name]
        return jnp.concatenate([field[listed], jnp.zeros(NEAR, field.dtype)])

    fields = {name: rows(name) for name in _TABLE}
    alive = jnp.concatenate([w.alive[listed] & used, jnp.zeros(NEAR, bool)])
    near = w._replace(**fields, alive=alive, omap=None, end=jnp.int32(NEAR),
                      broke=jnp.full(2 * NEAR, -1, jnp.int32))  # fmt: skip
    return near, listed, n


def _merge(w: World, near: World, listed, n) -> World:
    """The rows' updates written back to their slots, the arrows shot appended, the cells
    broken turned to path."""
    table, rows = w._asdict(), near._asdict()
    back = jnp.where(jnp.arange(NEAR) < n, listed, SLOTS)  # unused rows write nothing
    added = near.end - NEAR
    after = jnp.where(jnp.arange(NEAR) < added, w.end + jnp.arange(NEAR), SLOTS)
    merged = {}
    for name in (*_TABLE, "alive"):
        field = table[name].at[back].set(rows[name][:NEAR], mode="drop")
        merged[name] = field.at[after].set(rows[name][NEAR:], mode="drop")
    broke = jnp.where(near.broke >= 0, near.broke, AREA * AREA)
    mat = w.mat.reshape(-1).at[broke].set(PATH, mode="drop").reshape(AREA, AREA)
    return w._replace(**merged, mat=mat, end=w.end + added, chunks=near.chunks,
                      nchunks=near.nchunks, inventory=near.inventory)  # fmt: skip


def objects_update(w: World, count, noise) -> World:
    """Each object at the step's start within reach of the player, in list order (those
    added meanwhile wait; the far ones sleep).

    Which objects are within reach is fixed once the player has moved: an object moves only
    itself, and only its own update removes it. So the near ones are updated as a few rows
    (`_rows`), in a loop as long as the batch's most: under `vmap` each trip selects the
    whole carry for the envs done, and the rows are small where the maps are not. A world
    with more than NEAR objects within reach walks its whole table with its maps instead,
    in a loop whose trip count is 0 for the other envs: under `vmap` it runs only while some
    env needs it (its body reads the counter, so XLA cannot hoist it out and run it every
    step)."""
    near, listed, n = _rows(w, count)
    walk = n > NEAR
    near = jax.lax.fori_loop(
        0,
        jnp.where(walk, 0, n),
        lambda j, near: update_object(near, j, noise, listed[j] < count),
        near,
    )
    w = _merge(w, near, listed, jnp.where(walk, 0, n))
    w = jax.lax.fori_loop(0, jnp.where(walk, count, 0), lambda s, w: update_object(w, s, noise), w)
    return w._replace(omap=None)  # stale where the env did not walk: made afresh after


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


def _balance_kind(w: World, padded, chunk, k: int, noise, light) -> World:
    material, span, despan, spawn_p, despawn_p, health = BALANCE[k]
    xmin, xmax, ymin, ymax = _bounds(chunk)
    row = OFFSET["balance"] + (chunk * 3 + k) * WIDTH["balance"]
    u0, u1 = noise[row], noise[row + 1]
    inside = (w.x >= xmin) & (w.x < xmax) & (w.y >= ymin) & (w.y < ymax)
    mine = w.alive & (w.kind == k) & inside
    count = mine.sum()
    # The chunk's cells of the material, x outer and y inner (NumPy's order of a mask).
    region = jax.lax.dynamic_slice(padded, (xmin, ymin), (CHUNK, CHUNK))
    cells = (region == material).ravel()
    space = cells.sum()
    fewest, most = _targets(k, space, light)
    spawns = (count < fewest.astype(jnp.int32)) & (u0 < spawn_p)
    i = pick(u1, jnp.maximum(space, 1))
    flat = jnp.argmax(running(cells.astype(jnp.int32)) > i)
    sx, sy = xmin + flat // CHUNK, ymin + flat % CHUNK
    free = at(w, sx, sy)[1] == 0  # (sx, sy) is on the map: a cell of the material
    spawns = spawns & free & (distance(w.player_x, w.player_y, sx, sy) >= span)
    w = add_object(w, spawns, k, sx, sy, health=health)
    # Too many: one of them, picked in list order, goes if far enough from the player.
    culls = ~(count < fewest.astype(jnp.int32)) & (count > most.astype(jnp.int32))
    culls = culls & (u0 < despawn_p)
    victim = jnp.argmax(running(mine.astype(jnp.int32)) > pick(u1, jnp.maximum(count, 1)))
    vx, vy = w.x[victim], w.y[victim]
    culls = culls & (distance(w.player_x, w.player_y, vx, vy) >= despan)
    return w._replace(
        alive=w.alive.at[victim].set(w.alive[victim] & ~culls),
        omap=set_cell(w.omap, vx, vy, 0, culls),
    )


def balance(w: World, noise, light, due) -> World:
    """Every 10th step: each chunk key, in the order made, balances zombies, skeletons and
    cows in turn. The world has no `omap` here (a cell's object is found in the table), so
    the loop, as long as the batch's most keys, selects no map per trip under `vmap`; the
    materials do not change, so the map is padded once for the chunks' regions."""
    padded = jnp.pad(w.mat, (0, CHUNK))

    def chunk(c, w):
        for k in (ZOMBIE, SKELETON, COW):
            w = _balance_kind(w, padded, w.chunks[c], k, noise, light)
        return w

    return jax.lax.fori_loop(0, jnp.where(due, w.nchunks, 0), chunk, w)


def advance(w: World, count, action, noise, step) -> tuple[World, jax.Array]:
    """The world after one step's updates and balance. -> (world, daylight)."""
    light = daylight(step)
    w = update_player(w, action, noise[0])
    w = objects_update(w, count, noise)
    w = balance(w, noise, light, step % 10 == 0)
    return w._replace(omap=occupancy(w.x, w.y, w.alive, w.player_x, w.player_y)), light
