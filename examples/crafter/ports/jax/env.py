"""Hand-written known-good port: a test subject for the verifier, not model output.

Crafter in the gymnax functional style (envport's JAX contract), with explicit randomness:
`sample_noise` draws a step's numbers (a row per drawing site: the player, each zombie,
skeleton and cow by its place in its list, each chunk's balance of each kind),
`step_given_noise` is the deterministic rest, and `step` is the two composed. The state is
the bridge's leaves, except the objects: the material map, the player, the objects as one
table in the world's list order (the step's own layout; the bridge's one list of records
per kind, `name` [capacity, F] and its length, whose `order` is the place among the world's
objects, is read into it and written from it), the chunk keys in the order made, and the
inventory, achievements and unlocks as arrays in Crafter's item and achievement orders.

The reset is Crafter's: a world from Crafter's generator (worldgen.py, with OpenSimplex in
simplex.py), its numbers drawn from the key, the player at the centre with Crafter's start
counters and inventory, added first and then the creatures in the order the generator
adds them (so the objects' order and the chunk keys' order are Crafter's)."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from .objects import NOISE
from .observation import observe
from .step import TABLE, advance, compact, pack, unpack
from .world import (
    ACHIEVEMENTS,
    AREA,
    CAPACITY,
    CHUNKS,
    COW,
    ITEMS,
    KINDS,
    LENGTH,
    MAX_ITEM,
    SKELETON,
    SLOTS,
    ZOMBIE,
    World,
    chunk_of,
    daylight,
)
from .worldgen import NOTHING, START, draw, generate

RECORD = {"zombies": 5, "skeletons": 5, "cows": 4, "arrows": 5, "plants": 5}


class Params(NamedTuple):
    pass


class State(NamedTuple):
    mat_map: jax.Array
    player_pos: jax.Array
    facing: jax.Array
    sleeping: jax.Array
    player_last_health: jax.Array
    hunger: jax.Array
    thirst: jax.Array
    fatigue: jax.Array
    recover: jax.Array
    step: jax.Array
    last_health: jax.Array
    daylight: jax.Array
    chunks: jax.Array
    chunks_length: jax.Array
    # The objects as the step's table: the first `count` slots in the world's list order
    # (field -> int32[SLOTS], `step.compact`'s layout), not the bridge's lists per kind: a
    # step then starts from it as it is, and only the bridge's reads lay it out by kind.
    table: dict
    count: jax.Array
    inventory: jax.Array  # int32[16]
    achievements: jax.Array  # int32[22]
    unlocked: jax.Array  # bool[22]


def default_params() -> Params:
    return Params()


def _world(s: State) -> tuple[World, jax.Array]:
    """The step's working world from the state. -> (world, objects at the start)."""
    fields, count = s.table, s.count
    px, py = s.player_pos[0], s.player_pos[1]
    # No map of the objects: a cell's object is found in the table (a map per env is a pass
    # over the batch's memory); the step makes the one it needs once the objects have moved.
    w = World(
        mat=s.mat_map, **fields, alive=jnp.arange(SLOTS) < count, end=count, player_x=px,
        player_y=py, facing=s.facing,
        sleeping=s.sleeping, inventory=s.inventory, achievements=s.achievements,
        hunger=s.hunger, thirst=s.thirst, fatigue=s.fatigue, recover=s.recover,
        last_health=s.player_last_health, chunks=s.chunks, nchunks=s.chunks_length,
    )  # fmt: skip
    return w, count


def _observe(s: State) -> jax.Array:
    w, _ = _world(s)
    return observe(w.mat, w.kind, w.x, w.y, w.alive, w.player_x, w.player_y, w.inventory)


# Each creature's record when the generator makes it (objects.Cow, Zombie, Skeleton): its
# health, then a zombie's cooldown or a skeleton's reload, 0.
HEALTH = {ZOMBIE: 5, SKELETON: 3, COW: 3}


def _objects(kind: jax.Array) -> tuple[dict, jax.Array, jax.Array, jax.Array]:
    """The generator's creatures (kind int32[AREA, AREA]) as the state's table, in the
    order Crafter adds them (x outer, then y). -> (table, objects, the chunk keys in the
    order made, their count)."""
    flat = kind.reshape(-1)
    made = flat != NOTHING
    order = jnp.cumsum(made) - 1
    cells = jnp.arange(AREA * AREA)
    x, y = cells // AREA, cells % AREA
    health = jnp.select([flat == code for code in HEALTH], list(HEALTH.values()), 0)
    slot = jnp.where(made, order, SLOTS)
    table = {f: jnp.zeros(SLOTS, jnp.int32) for f in TABLE}
    for name, value in (("kind", flat), ("x", x), ("y", y), ("health", health)):
        table[name] = table[name].at[slot].set(value, mode="drop")
    # A world holding more than a list's capacity drops the rest (none measured).
    fields, count = compact(table | {"alive": jnp.arange(SLOTS) < made.sum()})
    # World.add makes a chunk's key when its first object arrives: the player's first, then
    # each chunk by the first creature in it.
    never = AREA * AREA
    first = jnp.full(CHUNKS, never).at[chunk_of(x, y)].min(jnp.where(made, order, never))
    first = first.at[chunk_of(START[0], START[1])].set(-1)
    keys_made = (first < never).sum().astype(jnp.int32)
    keys = jnp.argsort(first).astype(jnp.int32)
    chunks = jnp.where(jnp.arange(CHUNKS) < keys_made, keys, 0)
    return fields, count, chunks, keys_made


def start(mat: jax.Array, kind: jax.Array) -> tuple[jax.Array, State]:
    """Env.reset's start in a generated world (worldgen.generate's materials and
    creatures): the player at the centre facing down with 9 health, food, drink and energy,
    its counters 0, added first, then the creatures; the clock at step 0."""
    table, count, chunks, keys_made = _objects(kind)
    inventory = jnp.zeros(len(ITEMS), jnp.int32).at[:4].set(MAX_ITEM)
    zero, nought = jnp.int32(0), jnp.float32(0.0)
    state = State(
        mat_map=mat, player_pos=jnp.array(START, jnp.int32),
        facing=jnp.array([0, 1], jnp.int32), sleeping=jnp.bool_(False),
        player_last_health=jnp.int32(MAX_ITEM), hunger=nought, thirst=nought, fatigue=nought,
        recover=nought, step=zero, last_health=jnp.int32(MAX_ITEM), daylight=daylight(zero),
        chunks=chunks, chunks_length=keys_made, table=table, count=count, inventory=inventory,
        achievements=jnp.zeros(len(ACHIEVEMENTS), jnp.int32),
        unlocked=jnp.zeros(len(ACHIEVEMENTS), bool),
    )  # fmt: skip
    return _observe(state), state


def reset(key: jax.Array, params: Params):
    """Crafter's reset: a world from worldgen (its numbers drawn per cell from `key`)."""
    mat, kind, _, _ = generate(*draw(key))
    return start(mat, kind)


def sample_noise(key: jax.Array, state: State, action, params: Params):
    return _uniform(key)


# Threefry-2x32's rotations, alternating by block of four rounds (Salmon et al., 2011).
ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


def _threefry(k0, k1, c0, c1) -> tuple[jax.Array, jax.Array]:
    """Threefry-2x32, 20 rounds, written out as straight-line ops."""
    ks = (k0, k1, k0 ^ k1 ^ jnp.uint32(0x1BD11BDA))
    x0, x1 = c0 + ks[0], c1 + ks[1]
    for block in range(5):
        for r in ROTATIONS[block % 2]:
            x0 = x0 + x1
            x1 = x0 ^ ((x1 << jnp.uint32(r)) | (x1 >> jnp.uint32(32 - r)))
        x0 = x0 + ks[(block + 1) % 3]
        x1 = x1 + ks[(block + 2) % 3] + jnp.uint32(block + 1)
    return x0, x1


def _uniform(key: jax.Array) -> jax.Array:
    """jax.random.uniform(key, (NOISE,)), bit for bit, for a threefry key (JAX's default:
    a raw key of two words, or a typed one) in JAX's default counter layout: each number one
    block at its counter, the block's two words xored, the top 23 bits a float in [1, 2)
    less 1. XLA on CPU runs JAX's own threefry as a loop of five trips copying its state;
    written out, it is one fused pass (at B=4096: 3.5 ms where it took 51 ms, a sixth of
    the step). Any other key: jax.random itself."""
    typed = jnp.issubdtype(key.dtype, jax.dtypes.prng_key)
    if (typed and "threefry" not in str(jax.random.key_impl(key))) or key.shape[-1:] == (4,):
        return jax.random.uniform(key, (NOISE,))
    k = jax.random.key_data(key) if typed else key
    x0, x1 = _threefry(
        k[0], k[1], jnp.zeros(NOISE, jnp.uint32), jnp.arange(NOISE, dtype=jnp.uint32)
    )
    bits = (x0 ^ x1) >> jnp.uint32(9) | jnp.uint32(0x3F800000)
    return jnp.maximum(0.0, jax.lax.bitcast_convert_type(bits, jnp.float32) - 1.0)


# Compiled, as a user calls it: the step's loops close over its values, so called eagerly
# each step would trace and compile them again.
@jax.jit
def step_given_noise(noise, state: State, action, params: Params):
    s = state
    noise = jnp.asarray(noise, jnp.float32)  # a NumPy row cannot be indexed by a traced slot
    step = s.step + 1
    w, count = _world(s)
    w, light = advance(w, count, jnp.asarray(action, jnp.int32), noise, step)
    table, count = compact(w._asdict())
    health = w.inventory[0]
    new = (w.achievements > 0) & ~s.unlocked
    reward = (health - s.last_health).astype(jnp.float32) / 10 + new.any().astype(jnp.float32)
    dead = health <= 0
    after = State(
        mat_map=w.mat, player_pos=jnp.stack([w.player_x, w.player_y]), facing=w.facing,
        sleeping=w.sleeping, player_last_health=w.last_health, hunger=w.hunger,
        thirst=w.thirst, fatigue=w.fatigue, recover=w.recover, step=step, last_health=health,
        daylight=light, chunks=w.chunks, chunks_length=w.nchunks, table=table,
        count=count, inventory=w.inventory, achievements=w.achievements,
        unlocked=s.unlocked | new,
    )  # fmt: skip
    obs = observe(w.mat, w.kind, w.x, w.y, w.alive, w.player_x, w.player_y, w.inventory)
    return obs, after, reward, dead, (step >= LENGTH) & ~dead, {}


def step(key: jax.Array, state: State, action, params: Params):
    return step_given_noise(sample_noise(key, state, action, params), state, action, params)


_INTS = ("player_last_health", "step", "last_health")
_FLOATS = ("hunger", "thirst", "fatigue", "recover", "daylight")


def state_from_reference(ref) -> State:
    # jnp.array copies: jnp.asarray of a NumPy array can share its buffer on CPU.
    def i(name):
        return jnp.array(ref[name], dtype=jnp.int32)

    lists = {k: i(k).reshape(CAPACITY[k], RECORD[k]) for k in KINDS}
    # Laid out in list order (sorted if the orders need it), then held as a step leaves it.
    fields, count = compact(unpack(lists, {k: i(f"{k}.length") for k in KINDS})[0])
    values = {n: i(n) for n in _INTS} | {n: jnp.array(ref[n], jnp.float32) for n in _FLOATS}
    return State(
        mat_map=i("mat_map").reshape(AREA, AREA), player_pos=i("player_pos").reshape(2),
        facing=i("facing").reshape(2), sleeping=jnp.array(ref["sleeping"], bool),
        chunks=i("chunks").reshape(CHUNKS), chunks_length=i("chunks.length"),
        table=fields, count=count,
        inventory=jnp.stack([i(f"inventory.{n}") for n in ITEMS]),
        achievements=jnp.stack([i(f"achievements.{n}") for n in ACHIEVEMENTS]),
        unlocked=jnp.stack([jnp.array(ref[f"unlocked.{n}"], bool) for n in ACHIEVEMENTS]),
        **values,
    )  # fmt: skip


def state_to_reference(state: State):
    lists, lengths = pack(state.table, state.count)
    out = {n: getattr(state, n) for n in (*_INTS, *_FLOATS)}
    out |= {n: getattr(state, n) for n in ("mat_map", "player_pos", "facing", "sleeping")}
    out |= {"chunks": state.chunks, "chunks.length": state.chunks_length}
    for k in KINDS:
        out[k], out[f"{k}.length"] = lists[k], lengths[k]
    out |= {f"inventory.{n}": state.inventory[j] for j, n in enumerate(ITEMS)}
    out |= {f"achievements.{n}": state.achievements[j] for j, n in enumerate(ACHIEVEMENTS)}
    out |= {f"unlocked.{n}": state.unlocked[j] for j, n in enumerate(ACHIEVEMENTS)}
    return out
