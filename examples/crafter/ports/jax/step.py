"""Hand-written known-good port: a test subject for the verifier, not model output.

Env.step for one env: the clock, the player's update, then each object's in the world's
list order (one loop over the slots, since a creature's move depends on where the ones
before it went), every 10th step the balance of zombies, skeletons and cows chunk by chunk,
then the reward, the unlocks and the ends. The objects are one table in the world's list
order, as the state keeps them (`compact` closes the step's holes); the bridge's lists, one
per kind, each record starting with its `order`, its place in the world's list, are read
into it (`unpack`) and written from it (`pack`), orders counted afresh."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .objects import OFFSET, WIDTH, pick, update_object
from .player import update_player
from .world import (
    AREA,
    CAPACITY,
    CHUNK,
    CHUNKS,
    CHUNKS_PER_SIDE,
    COW,
    GRASS,
    KINDS,
    PATH,
    SKELETON,
    SLOTS,
    STANDING_PLAYER,
    UPDATE_RADIUS,
    ZOMBIE,
    World,
    chunk_of,
    daylight,
    distance,
    ranks,
    running,
)

# Each kind's record after `order, x, y`, as the world's table names its fields.
FIELDS = {
    "zombies": ("health", "counter"),
    "skeletons": ("health", "counter"),
    "cows": ("health",),
    "arrows": ("fx", "fy"),
    "plants": ("health", "grown"),
}
TABLE = ("kind", "x", "y", "health", "counter", "fx", "fy", "grown", "site")
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
    fields = {f: jnp.pad(table[f][sort], (0, room)) for f in TABLE}
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
    among its kind, with no sort (on CPU a sort runs a comparison at a time). Any other
    state is sorted, in a loop run once for it and not at all for the rest (under `vmap`
    only in a batch holding one)."""
    columns: dict[str, list] = {name: [] for name in (*TABLE, "order", "used", "next")}
    last = jnp.iinfo(jnp.int32).max
    for k, name in enumerate(KINDS):
        records, n = lists[name], lengths[name]
        rows = records.shape[0]
        values = {f: jnp.zeros(rows, jnp.int32) for f in TABLE}
        values.update(kind=jnp.full(rows, k, jnp.int32), x=records[:, 1], y=records[:, 2])
        for i, field in enumerate(FIELDS[name]):
            values[field] = records[:, 3 + i]
        for field in TABLE:
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
    fields = {f: jnp.zeros(SLOTS, jnp.int32).at[slot].set(table[f], mode="drop") for f in TABLE}
    fields["site"] = jnp.zeros(SLOTS, jnp.int32).at[slot].set(within, mode="drop")
    fields["alive"] = jnp.zeros(SLOTS, bool).at[slot].set(used, mode="drop")

    def sort(i, fields):
        # Reads the counter: a loop-invariant body would be hoisted out and run every step.
        return _sorted(table, used, jnp.where(i == 0, key, last))

    return jax.lax.fori_loop(0, jnp.where(ordered, 0, 1), sort, fields), count


def stands(x, y, alive, kind, px, py) -> jax.Array:
    """-> uint8[64, 64]: what stands on each cell: kind + 1 for an object, STANDING_PLAYER
    for the player, else 0. The balance's map of the objects, made only for the envs due (a
    map per env is a pass over a batch's memory); the updates and the observation find a
    cell's object in the table."""
    grid = jnp.zeros((AREA, AREA), jnp.uint8)
    # A cell off the table's objects (x past the map) is dropped, not clipped onto the map.
    grid = grid.at[jnp.where(alive, x, AREA), y].set((kind + 1).astype(jnp.uint8), mode="drop")
    return grid.at[px, py].set(STANDING_PLAYER)


def compact(table: dict) -> tuple[dict, jax.Array]:
    """The live objects (`alive`) at the table's start in list order, holes closed, each
    kind held to its list's capacity (the bridge's lists hold no more), every field past them
    0, `site` each one's place among its kind (its row of the next step's noise).
    -> (fields [SLOTS], how many). The state keeps its objects so: a step starts from its
    table with no layout to make, and only the bridge's reads lay them out per kind."""
    mines = [table["alive"] & (table["kind"] == k) for k in range(len(KINDS))]
    places = ranks(*mines)
    caps = jnp.array([CAPACITY[name] for name in KINDS], jnp.int32)
    site = sum(jnp.where(mine, place - 1, 0) for mine, place in zip(mines, places, strict=True))
    keep = table["alive"] & (site < caps[jnp.clip(table["kind"], 0, len(KINDS) - 1)])
    (order,) = ranks(keep)
    slot = jnp.where(keep, order - 1, SLOTS)
    values = dict(table, site=site)
    fields = {f: jnp.zeros(SLOTS, jnp.int32).at[slot].set(values[f], mode="drop") for f in TABLE}
    return fields, keep.sum().astype(jnp.int32)


def pack(fields: dict, count) -> tuple[dict, dict]:
    """The table's objects (a compacted table: the first `count` slots, in list order) per
    kind, orders counted afresh. -> (records per kind [capacity, F], lengths)."""
    order = jnp.arange(SLOTS, dtype=jnp.int32)
    lists, lengths = {}, {}
    for k, name in enumerate(KINDS):
        mine = (order < count) & (fields["kind"] == k)
        place = jnp.where(mine, fields["site"], CAPACITY[name])
        columns = [order, fields["x"], fields["y"]] + [fields[f] for f in FIELDS[name]]
        records = jnp.stack(columns, axis=1).astype(jnp.int32)
        empty = jnp.zeros((CAPACITY[name], len(columns)), jnp.int32)
        lists[name] = empty.at[place].set(records, mode="drop")
        lengths[name] = jnp.minimum(mine.sum(), CAPACITY[name]).astype(jnp.int32)
    return lists, lengths


def _rows(w: World, count) -> tuple[World, jax.Array, jax.Array]:
    """The objects within reach of any cell the updates can touch, as NEAR rows in list
    order, then NEAR empty rows for the arrows they may shoot (a cell's object is found
    among the rows); no writes to the material map (`broke` keeps them).
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

    fields = {name: rows(name) for name in TABLE}
    alive = jnp.concatenate([w.alive[listed] & used, jnp.zeros(NEAR, bool)])
    near = w._replace(**fields, alive=alive, end=jnp.int32(NEAR),
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
    for name in (*TABLE, "alive"):
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
    return jax.lax.fori_loop(
        0, jnp.where(walk, count, 0), lambda s, w: update_object(w, s, noise), w
    )


def _targets(k: int, space, light) -> tuple[jax.Array, jax.Array]:
    """Each chunk's (fewest, most) of kind k, before int()."""
    if k == ZOMBIE:
        most = 3.5 - 3 * light
        return jnp.where(space < 50, 0.0, most), jnp.broadcast_to(most, space.shape)
    if k == SKELETON:
        return jnp.where(space < 6, 0.0, 1.0), jnp.full(space.shape, 2.0)
    return jnp.where(space < 30, 0.0, 1.0), jnp.broadcast_to(1.5 + light, space.shape)


def _nth(words, n) -> jax.Array:
    """The place (32 j + p) of each row's n-th set bit, counted from 0 (n below the row's
    count): the word by the counts before it, then the bit by halving. (Masks, sums and a
    product, no cumsum or gather: on CPU under `vmap` those go an element at a time.)"""
    width = words.shape[-1]
    counts = jax.lax.population_count(words).astype(jnp.float32)
    earlier = (jnp.arange(width)[:, None] < jnp.arange(width)[None, :]).astype(jnp.float32)
    before = (counts @ earlier).astype(jnp.int32)  # exact: counts are small integers
    word = jnp.clip((before <= n[..., None]).sum(-1) - 1, 0, width - 1)
    this = word[..., None] == jnp.arange(width)
    rest = n - jnp.where(this, before, 0).sum(-1)
    bits = jnp.where(this, words, jnp.uint32(0)).sum(-1, dtype=jnp.uint32)
    place = jnp.zeros_like(n)
    for step in (16, 8, 4, 2, 1):
        below = bits & ((jnp.uint32(1) << (place + step).astype(jnp.uint32)) - 1)
        place = jnp.where(jax.lax.population_count(below).astype(jnp.int32) <= rest,
                          place + step, place)  # fmt: skip
    return word * 32 + place


def _cells(mat) -> dict[int, jax.Array]:
    """-> {GRASS, PATH: uint32[CHUNKS, CHUNK]}: each chunk's cells of the material, a word
    per row x (bit y - ymin), chunks by their number (NumPy's order of a chunk's mask is x
    outer, y inner); past the map's edge, none. One pass over the map: a cell is 1 for
    grass, 4096 for path, and a row's bits are its product with the powers of two (exact in
    float32: under 2^24), grass in the low 12 bits and path above."""
    y = jnp.arange(AREA)
    powers = jnp.where(y[:, None] // CHUNK == jnp.arange(CHUNKS_PER_SIDE)[None, :],
                       2.0 ** (y % CHUNK)[:, None], 0.0).astype(jnp.float32)  # fmt: skip
    cell = jnp.where(mat == GRASS, 1.0, jnp.where(mat == PATH, 4096.0, 0.0))
    rows = (cell.astype(jnp.float32) @ powers).astype(jnp.uint32)  # [x, chunk column]
    rows = jnp.pad(rows, ((0, CHUNKS_PER_SIDE * CHUNK - AREA), (0, 0)))
    rows = rows.reshape(CHUNKS_PER_SIDE, CHUNK, CHUNKS_PER_SIDE).transpose(0, 2, 1)
    rows = rows.reshape(CHUNKS, CHUNK)
    return {GRASS: rows & 4095, PATH: rows >> 12}


def _balance(w: World, noise, light) -> World:
    """Each chunk key, in the order made, balances zombies, skeletons and cows in turn
    (Env._balance_object). A chunk's balance spawns and culls only inside the chunk and
    counts only the creatures there, so the chunks are balanced at once, kind by kind, with
    no loop (under `vmap` a loop over the keys would run to the batch's most keys). Sets
    are bit masks: a chunk's cells of a material, a chunk's creatures of a kind over the
    table's slots; "the i-th of them" is the i-th set bit. What a chunk's earlier kinds did
    is seen by its later ones (a cull frees a cell, a spawn holds one); the spawns join the
    table at its end in the order the keys' loop adds them (chunk by chunk, kind by kind).
    The table never fills (its slots outnumber the lists' capacities by the most a step
    adds in practice); past it, a spawn is dropped."""
    ids = w.chunks
    listed = jnp.arange(CHUNKS) < w.nchunks
    xmin, ymin = (ids // CHUNKS_PER_SIDE) * CHUNK, (ids % CHUNKS_PER_SIDE) * CHUNK
    cells = {m: rows[ids] for m, rows in _cells(w.mat).items()}
    # Each kind's creatures in each chunk, in list order: a mask over the slots per chunk.
    # (Each slot adds its own bit, so the adds are ors.)
    words = (SLOTS + 31) // 32
    group = jnp.where(w.alive & (w.kind <= COW), w.kind * CHUNKS + chunk_of(w.x, w.y), 3 * CHUNKS)
    slots = jnp.arange(SLOTS, dtype=jnp.uint32)
    members = jnp.zeros(3 * CHUNKS * words, jnp.uint32)
    members = members.at[group * words + slots // 32].add(jnp.uint32(1) << slots % 32, mode="drop")
    members = members.reshape(3, CHUNKS, words)
    # What stands on each cell: a cull frees its cell for the chunk's later kinds, which
    # also meet its earlier kinds' spawns (`spawned`); the spawns are marked at the end.
    grid = stands(w.x, w.y, w.alive, w.kind, w.player_x, w.player_y).reshape(-1)
    alive = w.alive
    spawned: list[tuple[jax.Array, jax.Array, jax.Array]] = []
    for k in (ZOMBIE, SKELETON, COW):
        material, span, despan, spawn_p, despawn_p, _ = BALANCE[k]
        row = OFFSET["balance"] + (ids * 3 + k) * WIDTH["balance"]
        u0, u1 = noise[row], noise[row + 1]
        mine = members[k][ids]
        count = jax.lax.population_count(mine).astype(jnp.int32).sum(-1)
        space = jax.lax.population_count(cells[material]).astype(jnp.int32).sum(-1)
        fewest, most = _targets(k, space, light)
        fewest, most = fewest.astype(jnp.int32), most.astype(jnp.int32)
        spawns = listed & (count < fewest) & (u0 < spawn_p)
        at = _nth(cells[material], pick(u1, jnp.maximum(space, 1)))
        sx, sy = xmin + at // 32, ymin + at % 32
        held = grid[jnp.clip(sx, 0, AREA - 1) * AREA + jnp.clip(sy, 0, AREA - 1)] > 0
        for go, ox, oy in spawned:
            held = held | (go & (ox == sx) & (oy == sy))
        spawns = spawns & ~held & (distance(w.player_x, w.player_y, sx, sy) >= span)
        spawned.append((spawns, sx, sy))
        # Too many: one of them, picked in list order, goes if far enough from the player.
        culls = listed & ~(count < fewest) & (count > most) & (u0 < despawn_p)
        victim = _nth(mine, pick(u1, jnp.maximum(count, 1)))
        far = distance(w.player_x, w.player_y, w.x[victim], w.y[victim]) >= despan
        gone = culls & far
        alive = alive.at[jnp.where(gone, victim, SLOTS)].set(False, mode="drop")
        freed = jnp.where(gone, w.x[victim] * AREA + w.y[victim], AREA * AREA)
        grid = grid.at[freed].set(0, mode="drop")
    # The spawns, chunk by chunk and kind by kind, appended in that order.
    go = jnp.stack([s[0] for s in spawned], axis=1).reshape(-1)
    place = jnp.where(go, w.end + running(go.astype(jnp.int32)) - 1, SLOTS)
    place = jnp.where(place < SLOTS, place, SLOTS)
    kinds = jnp.tile(jnp.array([ZOMBIE, SKELETON, COW], jnp.int32), CHUNKS)
    healths = jnp.tile(jnp.array([BALANCE[k][5] for k in (ZOMBIE, SKELETON, COW)]), CHUNKS)
    rows = {"kind": kinds, "health": healths, "alive": True}
    rows["x"] = jnp.stack([s[1] for s in spawned], axis=1).reshape(-1)
    rows["y"] = jnp.stack([s[2] for s in spawned], axis=1).reshape(-1)
    table = w._asdict() | {"alive": alive}
    fields = {}
    # Only the fields a spawn does not leave 0: every slot past `end` is empty, all its
    # fields 0 (unpack places the records on zeros; an object added writes its whole row).
    for name, value in rows.items():
        value = jnp.broadcast_to(value, place.shape).astype(table[name].dtype)
        fields[name] = table[name].at[place].set(value, mode="drop")
    return w._replace(**fields, end=w.end + go.sum().astype(jnp.int32))


# What the balance writes (the rest of the world it only reads).
_BALANCED = ("kind", "x", "y", "health", "alive", "end")


@jax.custom_batching.custom_vmap
def balance(w: World, noise, light, due) -> World:
    """Every 10th step (`due`), the balance (`_balance`); else the world as it is."""
    return jax.lax.cond(due, _balance, lambda w, noise, light: w, w, noise, light)


@balance.def_vmap
def _balance_batched(size: int, batched, w: World, noise, light, due):
    """Under `vmap`: only the envs due are balanced. In a batch whose envs' clocks differ
    (an env that ends restarts at step 0) some env is due every step, and a balance
    vmapped over the batch has every env pay it where a tenth are due. So the envs due are
    gathered, an eighth of the batch at a time, balanced as a batch of their own and
    written back: no trip when none is due, one when the clocks are spread."""
    args = []
    for arg, flags in zip((w, noise, light, due), batched, strict=True):
        args.append(
            jax.tree.map(
                lambda x, b: x if b else jnp.broadcast_to(x, (size, *jnp.shape(x))), arg, flags
            )
        )
    w, noise, light, due = args
    part = -(-size // 8)
    trips = -(-size // part)
    envs = jnp.nonzero(due, size=trips * part, fill_value=size)[0]
    out = {name: getattr(w, name) for name in _BALANCED}

    def trip(t, out):
        some = jax.lax.dynamic_slice(envs, (t * part,), (part,))
        at = jnp.minimum(some, size - 1)
        done = jax.vmap(_balance)(jax.tree.map(lambda x: x[at], w), noise[at], light[at])
        back = jnp.where(some < size, some, size)  # past the envs due: written nowhere
        done = done._asdict()
        return {k: v.at[back].set(done[k], mode="drop") for k, v in out.items()}

    out = jax.lax.fori_loop(0, (due.sum() + part - 1) // part, trip, out)
    return w._replace(**out), jax.tree.map(lambda _: True, w)


def advance(w: World, count, action, noise, step) -> tuple[World, jax.Array]:
    """The world after one step's updates and balance. -> (world, daylight)."""
    light = daylight(step)
    w = update_player(w, action, noise[0])
    w = objects_update(w, count, noise)
    return balance(w, noise, light, step % 10 == 0), light
