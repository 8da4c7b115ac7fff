"""Hand-written known-good port: a test subject for the verifier, not model output.

Crafter's world in JAX for one env: the materials and the rules' tables as arrays, the
daylight curve, chunks, and `World`, what a step works on: the material map, a map of which
object holds each cell, the objects as one table in the world's list order (a slot per
object, kinds mixed, as Crafter keeps them in one list), the player and the chunk keys in
the order they were made. A removed object keeps its slot (marked not alive) until the
step ends, as Crafter's list keeps a hole."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

AREA = 64
CHUNK = 12
CHUNKS_PER_SIDE = 6
CHUNKS = CHUNKS_PER_SIDE * CHUNKS_PER_SIDE
LENGTH = 10000
UPDATE_RADIUS = 18  # 2 * max(view): an object this far from the player or more sleeps
MAX_ITEM = 9

NONE, WATER, GRASS, STONE, PATH, SAND, TREE, LAVA = range(8)
COAL, IRON, DIAMOND, TABLE, FURNACE = range(8, 13)
MATERIALS = 13  # codes 0 (none) .. 12 (furnace)

ITEMS = ["health", "food", "drink", "energy", "sapling", "wood", "stone", "coal", "iron"]
ITEMS += ["diamond", "wood_pickaxe", "stone_pickaxe", "iron_pickaxe", "wood_sword"]
ITEMS += ["stone_sword", "iron_sword"]
ITEM = {name: i for i, name in enumerate(ITEMS)}
ACHIEVEMENTS = ["collect_coal", "collect_diamond", "collect_drink", "collect_iron"]
ACHIEVEMENTS += ["collect_sapling", "collect_stone", "collect_wood", "defeat_skeleton"]
ACHIEVEMENTS += ["defeat_zombie", "eat_cow", "eat_plant", "make_iron_pickaxe"]
ACHIEVEMENTS += ["make_iron_sword", "make_stone_pickaxe", "make_stone_sword"]
ACHIEVEMENTS += ["make_wood_pickaxe", "make_wood_sword", "place_furnace", "place_plant"]
ACHIEVEMENTS += ["place_stone", "place_table", "wake_up"]
ACHIEVED = {name: i for i, name in enumerate(ACHIEVEMENTS)}

# Object kinds, in the order the state lists them; the player's object code (`at`).
ZOMBIE, SKELETON, COW, ARROW, PLANT = range(5)
KINDS = ("zombies", "skeletons", "cows", "arrows", "plants")
CAPACITY = {"zombies": 96, "skeletons": 56, "cows": 88, "arrows": 24, "plants": 32}
# Slots for the objects at a step's start and those it adds (arrows, a plant, spawns).
SLOTS = sum(CAPACITY.values()) + 24
PLAYER = SLOTS + 1
# What stands on a cell in the balance's map of the objects (`stands`): kind + 1, or the player.
STANDING_PLAYER = len(KINDS) + 1


def _mask(*codes: int) -> int:
    return sum(1 << c for c in codes)


# Materials as bit masks over their codes: "is the material in this list" is one shift.
WALKABLE = _mask(GRASS, SAND, PATH)
PLAYER_WALKABLE = WALKABLE | _mask(LAVA)
ARROW_WALKABLE = WALKABLE | _mask(WATER, LAVA)
DIRECTIONS = jnp.array([[-1, 0], [1, 0], [0, -1], [0, 1]], jnp.int32)  # randint(0, 4)


def _table(rows: dict[int, tuple], width: int, fill) -> jax.Array:
    out = [fill] * MATERIALS
    for code, row in rows.items():
        out[code] = row
    return jnp.array(out, jnp.float32 if width == 0 else jnp.int32)


# A material collected: (item required or -1, item received, the cell after, probability).
_COLLECT = {
    TREE: (-1, ITEM["wood"], GRASS, 1.0),
    STONE: (ITEM["wood_pickaxe"], ITEM["stone"], PATH, 1.0),
    COAL: (ITEM["wood_pickaxe"], ITEM["coal"], PATH, 1.0),
    IRON: (ITEM["stone_pickaxe"], ITEM["iron"], PATH, 1.0),
    DIAMOND: (ITEM["iron_pickaxe"], ITEM["diamond"], PATH, 1.0),
    WATER: (-1, ITEM["drink"], WATER, 1.0),
    GRASS: (-1, ITEM["sapling"], GRASS, 0.1),
}
COLLECTABLE = _mask(*_COLLECT)
COLLECT_NEEDS = _table({m: r[0] for m, r in _COLLECT.items()}, 1, -1)
COLLECT_GIVES = _table({m: r[1] for m, r in _COLLECT.items()}, 1, 0)
COLLECT_LEAVES = _table({m: r[2] for m, r in _COLLECT.items()}, 1, 0)
COLLECT_CHANCE = _table({m: r[3] for m, r in _COLLECT.items()}, 0, 0.0)
COLLECT_ACHIEVED = jnp.array([ACHIEVED.get(f"collect_{name}", 0) for name in ITEMS], jnp.int32)


def _uses(**amounts: int) -> list[int]:
    return [amounts.get(name, 0) for name in ITEMS]


# Actions 7..10, place_*: (what is placed: a material code, or -1 for a plant object),
# the items used, where it may go, its achievement.
PLACED = jnp.array([STONE, TABLE, FURNACE, -1], jnp.int32)
PLACE_USES = jnp.array([_uses(stone=1), _uses(wood=2), _uses(stone=4), _uses(sapling=1)], jnp.int32)
PLACE_WHERE = jnp.array(
    [WALKABLE | _mask(WATER, LAVA), WALKABLE, WALKABLE, _mask(GRASS)], jnp.int32
)
PLACE_ACHIEVED = jnp.array(
    [ACHIEVED[f"place_{n}"] for n in ("stone", "table", "furnace", "plant")], jnp.int32
)
# Actions 11..16, make_*: the tool made, the items used, whether a furnace must be near
# too (a table always must), its achievement.
MADE = ["wood_pickaxe", "stone_pickaxe", "iron_pickaxe", "wood_sword", "stone_sword"]
MADE += ["iron_sword"]
MAKE_GIVES = jnp.array([ITEM[n] for n in MADE], jnp.int32)
_IRON = _uses(wood=1, coal=1, iron=1)
MAKE_USES = jnp.array(
    [_uses(wood=1), _uses(wood=1, stone=1), _IRON, _uses(wood=1), _uses(wood=1, stone=1), _IRON],
    jnp.int32,
)
MAKE_FURNACE = jnp.array([False, False, True, False, False, True])
MAKE_ACHIEVED = jnp.array([ACHIEVED[f"make_{n}"] for n in MADE], jnp.int32)


def daylight(step) -> jax.Array:
    """Env._update_time. The phase is taken from step % 300 (exact), where Crafter divides
    first: in float32, step / 300 near 33 would carry an error of 4e-6."""
    progress = (step % 300).astype(jnp.float32) / 300 + 0.3
    return 1 - jnp.abs(jnp.cos(jnp.pi * progress)) ** 3


def chunk_of(x, y) -> jax.Array:
    return (x // CHUNK) * CHUNKS_PER_SIDE + y // CHUNK


def toward(sx, sy, tx, ty, long_axis=True) -> tuple[jax.Array, jax.Array]:
    """Object.toward: one step along the longer axis (long_axis) or the other."""
    dx, dy = tx - sx, ty - sy
    along_x = jnp.where(long_axis, jnp.abs(dx) > jnp.abs(dy), jnp.abs(dx) <= jnp.abs(dy))
    return jnp.where(along_x, jnp.sign(dx), 0), jnp.where(along_x, 0, jnp.sign(dy))


def distance(ax, ay, bx, by) -> jax.Array:
    return jnp.abs(ax - bx) + jnp.abs(ay - by)


def has(mask, code) -> jax.Array:
    """Whether material `code` is in the bit mask `mask`."""
    return (jnp.right_shift(mask, code) & 1) == 1


class World(NamedTuple):
    # No map of which object holds a cell: a cell's object is found in the table (a map per
    # env is a pass over a batch's memory).
    mat: jax.Array  # int32[64, 64] material codes
    kind: jax.Array  # int32[SLOTS], each slot's kind (any value in a slot not in use)
    x: jax.Array
    y: jax.Array
    health: jax.Array
    counter: jax.Array  # a zombie's cooldown, a skeleton's reload
    fx: jax.Array  # an arrow's direction
    fy: jax.Array
    grown: jax.Array  # a plant's
    alive: jax.Array  # bool[SLOTS]
    site: jax.Array  # its place in its kind's list at the step's start: its noise row
    end: jax.Array  # the slot the next object added takes
    player_x: jax.Array
    player_y: jax.Array
    facing: jax.Array  # int32[2]
    sleeping: jax.Array
    inventory: jax.Array  # int32[16], ITEMS' order
    achievements: jax.Array  # int32[22], ACHIEVEMENTS' order
    hunger: jax.Array
    thirst: jax.Array
    fatigue: jax.Array
    recover: jax.Array
    last_health: jax.Array  # Player._last_health
    chunks: jax.Array  # int32[36], the keys in the order made
    nchunks: jax.Array
    # The near objects' loop (step.py) works on a few rows of the table and the step's
    # material map unchanged: an arrow row's `broke` is the cell (x * AREA + y) it turned
    # to path, else -1.
    broke: jax.Array | None = None


def running(x) -> jax.Array:
    """The running sum of an int vector (x[0], x[0] + x[1], ...). jnp.cumsum is a
    reduce-window on CPU, about twice the time of this scan of halving strides."""
    return jax.lax.associative_scan(jnp.add, x)


def ranks(*masks) -> list[jax.Array]:
    """For each bool mask over the slots, each slot's count of set slots up to it (itself
    included): three masks to a running sum, each in a 10-bit field of one int32 (at most
    SLOTS < 1024 slots are set), since a running sum's cost is its passes, not its width."""
    out = []
    for at in range(0, len(masks), 3):
        group = masks[at : at + 3]
        packed = sum(m.astype(jnp.int32) << (10 * i) for i, m in enumerate(group))
        total = running(packed)
        out += [(total >> (10 * i)) & 1023 for i in range(len(group))]
    return out


def read(field, s) -> jax.Array:
    """field[s], s past the rows reading the last (a gather clamps)."""
    return field[jnp.clip(s, 0, field.shape[0] - 1)]


def write(field, s, value) -> jax.Array:
    """field with field[s] = value, by a mask; s past the rows writes nothing."""
    return jnp.where(jnp.arange(field.shape[0]) == s, jnp.asarray(value, field.dtype), field)


def inside(x, y) -> jax.Array:
    return (x >= 0) & (x < AREA) & (y >= 0) & (y < AREA)


def _least(values) -> jax.Array:
    """values.min() for an int vector, as the mins of parts of at most 32: XLA on CPU runs a
    longer reduction as a reduce-window, which took a step's loops two to three times as
    long (the near rows are 48)."""
    n = values.shape[0]
    parts = -(-n // 32)
    size = -(-n // parts)
    padded = jnp.pad(values, (0, parts * size - n), constant_values=jnp.iinfo(values.dtype).max)
    return padded.reshape(parts, size).min(axis=1).min()


def at(w: World, x, y) -> tuple[jax.Array, jax.Array]:
    """World.__getitem__: (material code, object code), (0, 0) off the map."""
    ok = inside(x, y)
    cx, cy = jnp.clip(x, 0, AREA - 1), jnp.clip(y, 0, AREA - 1)
    material = w.mat[cx, cy]
    if w.broke is not None:  # a row broke this cell to path: any, as a least of 0
        material = jnp.where(
            _least(jnp.where(w.broke == cx * AREA + cy, 0, 1)) == 0, PATH, material
        )
    # The object of the first row standing there, or the player.
    here = w.alive & (w.x == x) & (w.y == y)
    first = _least(jnp.where(here, jnp.arange(here.shape[0]), here.shape[0]))
    found = jnp.where(first < here.shape[0], first + 1, 0)
    code = jnp.where((x == w.player_x) & (y == w.player_y), PLAYER, found)
    return jnp.where(ok, material, NONE), jnp.where(ok, code, 0)


def is_free(w: World, x, y, materials: int) -> jax.Array:
    material, code = at(w, x, y)
    return (code == 0) & has(materials, material)


def set_cell(grid: jax.Array, x, y, value, go) -> jax.Array:
    """grid[x, y] = value where `go` (x, y on the map when `go`). Not going, the write
    falls off the map and is dropped: the old value is never read, so the write is the
    grid's one use and XLA can make it in place."""
    cx, cy = jnp.where(go, jnp.clip(x, 0, AREA - 1), AREA), jnp.clip(y, 0, AREA - 1)
    return grid.at[cx, cy].set(jnp.asarray(value, grid.dtype), mode="drop")


def add_key(w: World, x, y, go) -> World:
    """The chunk key of (x, y), made when `go` and not made yet (the dict's order)."""
    chunk = chunk_of(x, y)
    made = ((jnp.arange(CHUNKS) < w.nchunks) & (w.chunks == chunk)).any()
    new = go & ~made
    slot = jnp.minimum(w.nchunks, CHUNKS - 1)
    chunks = w.chunks.at[slot].set(jnp.where(new, chunk, w.chunks[slot]))
    return w._replace(chunks=chunks, nchunks=w.nchunks + new.astype(jnp.int32))


def add_object(w: World, go, kind, x, y, health=0, fx=0, fy=0) -> World:
    """World.add when `go`: the next slot, the cell it holds, its chunk's key."""
    s = jnp.minimum(w.end, w.kind.shape[0] - 1)

    def put(field, value):
        return write(field, jnp.where(go, s, field.shape[0]), value)

    w = w._replace(
        kind=put(w.kind, kind), x=put(w.x, x), y=put(w.y, y), health=put(w.health, health),
        counter=put(w.counter, 0), fx=put(w.fx, fx), fy=put(w.fy, fy), grown=put(w.grown, 0),
        alive=put(w.alive, True), site=put(w.site, 0),
        end=w.end + go.astype(jnp.int32),
    )  # fmt: skip
    return add_key(w, x, y, go)


def move_player(w: World, dx, dy, go) -> World:
    """Object.move for the player, when `go`: onto a free cell it may walk (lava too)."""
    tx, ty = w.player_x + dx, w.player_y + dy
    ok = go & is_free(w, tx, ty, PLAYER_WALKABLE)
    moved = chunk_of(tx, ty) != chunk_of(w.player_x, w.player_y)
    w = w._replace(player_x=jnp.where(ok, tx, w.player_x), player_y=jnp.where(ok, ty, w.player_y))
    return add_key(w, w.player_x, w.player_y, ok & moved)
