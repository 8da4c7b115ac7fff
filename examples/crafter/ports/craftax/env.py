"""Bridge that lets Craftax-Classic (craftax 1.6.1, Crafter rewritten in JAX by its authors)
be verified by envport against Crafter itself, unchanged.

The step is Craftax's own public `game_logic.craftax_step` (the body of its symbolic env's
`step_env`) at its default `EnvParams` and `StaticEnvParams`; the reset is its own
`world_gen.generate_world`. The bridge translates conventions, never behaviour:

- coordinates: Crafter's `mat_map[x][y]` and `(x, y)` are Craftax's `map[y, x]` and
  `(row, column)`; Crafter's facing `(dx, dy)` is one of Craftax's four move actions;
- materials: Crafter's ids onto `BlockType`; a Crafter plant is an object standing on
  grass, a Craftax plant a block (PLANT, or RIPE_PLANT once Craftax's own rule says so)
  with its age in `growing_plants_*`, read back as a plant object on grass;
- the actions are the same 17 in the same order; Craftax's one `done` is split as Crafter's
  (terminated when health reaches 0, truncated at the step limit otherwise);
- the observation the spec compares (9x7 semantic ids around the player, then the 16
  inventory counts) is drawn here from Craftax's state, Crafter's SemanticView numbering.

What Craftax's state has no room for is carried beside it, unchanged by the step, so that
each difference shows as one: how many times each achievement happened (Craftax keeps one
flag each: a count only rises from 0 to 1 here), Crafter's chunk keys (Craftax balances
mobs over the whole map, with no chunks), the player's `_last_health` (Craftax has none:
it wakes the sleeper when the hit lands; read back as the step's final health), and each
object's place in Crafter's one list of objects (`order`: a slot keeps its object's place,
a slot filled this step is placed after all others, plants, then arrows, then zombies,
skeletons and cows, as Crafter appends them; a slot emptied and refilled in the same step
keeps the old place).

Randomness: Craftax draws from its own key, with its own draws, and no number of the spec's
noise (one row per Crafter drawing site) can stand for them. `sample_noise` draws the spec's
shape uniformly, and `step_given_noise` seeds Craftax's key from the bits of the noise's
first two numbers: `step(key) == step_given_noise(sample_noise(key))` holds as the contract
says, but a recorded Crafter noise does not make Craftax draw what Crafter drew, so on a
step that draws, the recorded-noise checks compare Craftax's chance with Crafter's, and the
sampled-step check (`l1.sampled_step`) is the one that compares the two in distribution.

`can_hold` refuses what Craftax's fixed slots cannot hold (each reason in `_REFUSALS`)."""

import jax
import jax.numpy as jnp
from craftax.craftax_classic.constants import BlockType
from craftax.craftax_classic.envs.craftax_state import (
    EnvParams,
    EnvState,
    Inventory,
    Mobs,
    StaticEnvParams,
)
from craftax.craftax_classic.game_logic import craftax_step
from craftax.craftax_classic.world_gen import generate_world

PARAMS = EnvParams()
STATIC = StaticEnvParams()
AREA = 64
NOISE = 1017  # the spec's noise length (harness/noise.py)
B = BlockType
# Crafter's material ids (envport.toml [state.enums.material]) -> Craftax's blocks, and back.
_BLOCKS = (B.INVALID, B.WATER, B.GRASS, B.STONE, B.PATH, B.SAND, B.TREE, B.LAVA, B.COAL,
           B.IRON, B.DIAMOND, B.CRAFTING_TABLE, B.FURNACE)  # fmt: skip
TO_BLOCK = jnp.array([b.value for b in _BLOCKS], jnp.int32)
_BACK = {B.WATER: 1, B.GRASS: 2, B.STONE: 3, B.PATH: 4, B.SAND: 5, B.TREE: 6, B.LAVA: 7,
         B.COAL: 8, B.IRON: 9, B.DIAMOND: 10, B.CRAFTING_TABLE: 11, B.FURNACE: 12,
         B.PLANT: 2, B.RIPE_PLANT: 2}  # fmt: skip
TO_MATERIAL = (
    jnp.zeros(len(B), jnp.int32)
    .at[jnp.array([b.value for b in _BACK])]
    .set(jnp.array(list(_BACK.values()), jnp.int32))
)
# Craftax's direction (an action) from Crafter's facing, and back: (dx, dy) per action.
FACING = jnp.array([[0, 0], [-1, 0], [1, 0], [0, -1], [0, 1]], jnp.int32)

ITEMS = ("sapling", "wood", "stone", "coal", "iron", "diamond", "wood_pickaxe",
         "stone_pickaxe", "iron_pickaxe", "wood_sword", "stone_sword", "iron_sword")  # fmt: skip
INTRINSICS = ("health", "food", "drink", "energy")
# Crafter's achievement names, in Craftax's `Achievement` order (its names, lower case).
ACHIEVEMENTS = ("collect_wood", "place_table", "eat_cow", "collect_sapling", "collect_drink",
                "make_wood_pickaxe", "make_wood_sword", "place_plant", "defeat_zombie",
                "collect_stone", "place_stone", "eat_plant", "defeat_skeleton",
                "make_stone_pickaxe", "make_stone_sword", "wake_up", "place_furnace",
                "collect_coal", "collect_iron", "collect_diamond", "make_iron_pickaxe",
                "make_iron_sword")  # fmt: skip
# The spec's lists: capacity and record width; Craftax's slots for each.
CAPACITY = {"zombies": 96, "skeletons": 56, "cows": 88, "arrows": 24, "plants": 32}
WIDTH = {"zombies": 5, "skeletons": 5, "cows": 4, "arrows": 5, "plants": 5}
SLOTS = {"zombies": STATIC.max_zombies, "skeletons": STATIC.max_skeletons,
         "cows": STATIC.max_cows, "arrows": STATIC.max_arrows,
         "plants": STATIC.max_growing_plants}  # fmt: skip
# The order Crafter appends a step's new objects in: the player's plant, a skeleton's
# arrow during the objects' updates, then the balance's zombies, skeletons, cows.
APPENDED = ("plants", "arrows", "zombies", "skeletons", "cows")
# Semantic ids (Crafter's SemanticView): the player and each kind standing on a cell.
PLAYER_ID = 13
KIND_ID = {"cows": 14, "zombies": 15, "skeletons": 16, "arrows": 17, "plants": 18}
VIEW = (9, 7)
# The kinds drawn on the map, later over earlier (Craftax keeps one object to a cell but an
# arrow, which it fires from inside its skeleton).
DRAWN = ("plants", "arrows", "cows", "zombies", "skeletons")

# Each reason a Crafter state has no Craftax state, as `can_hold` tests it.
_REFUSALS = {
    "more zombies, skeletons, cows, arrows or plants than Craftax's fixed slots (3, 2, 3, "
    "3, 10: StaticEnvParams)": "slots",
    "a plant with health below 1: Craftax's saplings have no health (nothing damages "
    "them), Crafter's lose it to an adjacent mob and vanish at their next update": "plant",
    "a cell of material `none` (0): Craftax's map has no empty material": "none",
}


def default_params():
    return None


def _mobs(ref, kind):
    """The first slots of the spec's list as Craftax's `Mobs`, and each slot's order."""
    n = SLOTS[kind]
    rows = jnp.array(ref[kind], jnp.int32).reshape(CAPACITY[kind], WIDTH[kind])[:n]
    used = jnp.arange(n) < jnp.array(ref[f"{kind}.length"], jnp.int32)
    return rows, used


def state_from_reference(ref):
    i32 = jnp.int32
    mat = jnp.array(ref["mat_map"], i32).reshape(AREA, AREA)
    blocks = TO_BLOCK[mat].T  # Craftax's map is [row = y, column = x]
    mob_map = jnp.zeros((AREA, AREA), bool)
    mobs, orders = {}, {}
    for kind in ("zombies", "skeletons", "cows", "arrows"):
        rows, used = _mobs(ref, kind)
        pos = rows[:, 2:0:-1]  # (y, x)
        if kind != "arrows":  # Craftax marks zombies, skeletons and cows, never arrows
            mob_map = mob_map.at[pos[:, 0], pos[:, 1]].max(used)
        counter = rows[:, 4] if kind in ("zombies", "skeletons") else jnp.zeros_like(used, i32)
        health = rows[:, 3] if kind != "arrows" else jnp.zeros_like(used, i32)
        mobs[kind] = Mobs(position=pos, health=health, mask=used, attack_cooldown=counter)
        orders[kind] = jnp.where(used, rows[:, 0], -1)
    arrows, used = _mobs(ref, "arrows")
    directions = jnp.where(used[:, None], arrows[:, 4:2:-1], 1)  # (dy, dx); Craftax's 1 unused
    plants, planted = _mobs(ref, "plants")
    ppos, age = plants[:, 2:0:-1], jnp.where(planted, plants[:, 4], 0)
    ripe = age >= 600  # Craftax's own ripeness (update_plants), so its map agrees with it
    block = jnp.where(ripe, B.RIPE_PLANT.value, B.PLANT.value)
    blocks = blocks.at[ppos[:, 0], ppos[:, 1]].set(
        jnp.where(planted, block, blocks[ppos[:, 0], ppos[:, 1]])
    )
    orders["plants"] = jnp.where(planted, plants[:, 0], -1)
    pos = jnp.array(ref["player_pos"], i32).reshape(2)
    facing = jnp.array(ref["facing"], i32).reshape(2)
    direction = jnp.argmax((facing == FACING).all(axis=1)).astype(i32)
    unlocked = jnp.stack([jnp.array(ref[f"unlocked.{n}"], bool) for n in ACHIEVEMENTS])
    inventory = Inventory(**{n: jnp.array(ref[f"inventory.{n}"], i32) for n in ITEMS})
    step = jnp.array(ref["step"], i32)
    craftax = EnvState(
        map=blocks, mob_map=mob_map, player_position=pos[::-1], player_direction=direction,
        player_health=jnp.array(ref["inventory.health"], i32),
        player_food=jnp.array(ref["inventory.food"], i32),
        player_drink=jnp.array(ref["inventory.drink"], i32),
        player_energy=jnp.array(ref["inventory.energy"], i32),
        is_sleeping=jnp.array(ref["sleeping"], bool),
        player_recover=jnp.array(ref["recover"], jnp.float32),
        player_hunger=jnp.array(ref["hunger"], jnp.float32),
        player_thirst=jnp.array(ref["thirst"], jnp.float32),
        player_fatigue=jnp.array(ref["fatigue"], jnp.float32),
        inventory=inventory, zombies=mobs["zombies"], cows=mobs["cows"],
        skeletons=mobs["skeletons"], arrows=mobs["arrows"], arrow_directions=directions,
        growing_plants_positions=ppos, growing_plants_age=age, growing_plants_mask=planted,
        light_level=jnp.array(ref["daylight"], jnp.float32), achievements=unlocked,
        state_rng=jax.random.PRNGKey(0), timestep=step,
    )  # fmt: skip
    counts = jnp.stack([jnp.array(ref[f"achievements.{n}"], i32) for n in ACHIEVEMENTS])
    return {
        "craftax": craftax, "counts": counts, "orders": orders,
        "chunks": jnp.array(ref["chunks"], i32).reshape(36),
        "chunks_length": jnp.array(ref["chunks.length"], i32),
        "player_last_health": jnp.array(ref["player_last_health"], i32),
    }  # fmt: skip


def can_hold(ref):
    fits = jnp.bool_(True)
    for kind, slots in SLOTS.items():  # "slots"
        fits &= jnp.array(ref[f"{kind}.length"]) <= slots
    plants = jnp.array(ref["plants"]).reshape(CAPACITY["plants"], WIDTH["plants"])
    live = jnp.arange(CAPACITY["plants"]) < jnp.array(ref["plants.length"])
    fits &= ~(live & (plants[:, 3] < 1)).any()  # "plant"
    return fits & (jnp.array(ref["mat_map"]) != 0).all()  # "none"


def _live(c, kind):
    """-> (slot in use, (y, x)) of one kind in Craftax's state."""
    if kind == "plants":
        return c.growing_plants_mask, c.growing_plants_positions
    mobs = _mobs_of(c)[kind]
    return mobs.mask, mobs.position


def _mobs_of(c):
    return {"zombies": c.zombies, "skeletons": c.skeletons, "cows": c.cows, "arrows": c.arrows}


def observe(c):
    """-> uint8[79]: the 9x7 semantic ids around the player, obs[x][y], 0 off the map; then
    Crafter's 16 inventory counts."""
    ids = TO_MATERIAL[c.map]
    for kind in DRAWN:
        mask, pos = _live(c, kind)
        cells = ids[pos[:, 0], pos[:, 1]]
        ids = ids.at[pos[:, 0], pos[:, 1]].set(jnp.where(mask, KIND_ID[kind], cells))
    ids = ids.at[c.player_position[0], c.player_position[1]].set(PLAYER_ID)
    hx, hy = VIEW[0] // 2, VIEW[1] // 2
    grid = jnp.pad(ids.T, ((hx, hx), (hy, hy)))  # [x, y], padded with 0 off the map
    view = jax.lax.dynamic_slice(grid, (c.player_position[1], c.player_position[0]), VIEW)
    inventory = [c.player_health, c.player_food, c.player_drink, c.player_energy]
    inventory += [getattr(c.inventory, n) for n in ITEMS]
    return jnp.concatenate([view.ravel(), jnp.stack(inventory)]).astype(jnp.uint8)


def _orders(before, after):
    """Each slot's place in Crafter's list: kept where the slot held an object before the
    step, after all others (in APPENDED order, then by slot) where it was filled."""
    top = jnp.max(jnp.stack([o.max() for o in before["orders"].values()]))
    out = {}
    for kind in APPENDED:
        was, _ = _live(before["craftax"], kind)
        now, _ = _live(after["craftax"], kind)
        new = now & ~was
        rank = jnp.cumsum(new) - 1
        out[kind] = jnp.where(now, jnp.where(new, top + 1 + rank, before["orders"][kind]), -1)
        top = top + new.sum()
    return out


def _key(noise):
    bits = jax.lax.bitcast_convert_type(jnp.asarray(noise[:2], jnp.float32), jnp.uint32)
    return bits


def reset(key, params):
    c = generate_world(key, PARAMS, STATIC)
    c = jax.tree_util.tree_map(jnp.asarray, c)
    c = c.replace(timestep=jnp.int32(c.timestep), player_direction=jnp.int32(c.player_direction))
    c = c.replace(inventory=jax.tree_util.tree_map(jnp.int32, c.inventory))
    y, x = c.player_position[0], c.player_position[1]
    state = {
        "craftax": c, "counts": jnp.zeros(len(ACHIEVEMENTS), jnp.int32),
        "orders": {k: jnp.full(n, -1, jnp.int32) for k, n in SLOTS.items()},
        "chunks": jnp.zeros(36, jnp.int32).at[0].set((x // 12) * 6 + y // 12),
        "chunks_length": jnp.int32(1), "player_last_health": c.player_health,
    }  # fmt: skip
    return observe(c), state


def sample_noise(key, state, action, params):
    return jax.random.uniform(key, (NOISE,))


@jax.jit
def step_given_noise(noise, state, action, params):
    before = state["craftax"]
    c, reward = craftax_step(_key(noise), before, jnp.asarray(action, jnp.int32), PARAMS, STATIC)
    first = c.achievements & ~before.achievements
    after = dict(state, craftax=c, player_last_health=c.player_health)
    after["counts"] = state["counts"] + first.astype(jnp.int32)
    after["orders"] = _orders(state, after)
    dead = c.player_health <= 0
    truncated = (c.timestep >= PARAMS.max_timesteps) & ~dead
    return observe(c), after, jnp.float32(reward), dead, truncated, {}


def step(key, state, action, params):
    return step_given_noise(sample_noise(key, state, action, params), state, action, params)


def state_to_reference(state):
    c = state["craftax"]
    ref = {
        "mat_map": TO_MATERIAL[c.map].T, "player_pos": c.player_position[::-1],
        "facing": FACING[c.player_direction], "sleeping": c.is_sleeping,
        "player_last_health": state["player_last_health"], "hunger": c.player_hunger,
        "thirst": c.player_thirst, "fatigue": c.player_fatigue, "recover": c.player_recover,
        "step": c.timestep, "last_health": c.player_health, "daylight": c.light_level,
        "chunks": state["chunks"], "chunks.length": state["chunks_length"],
    }  # fmt: skip
    # Crafter's list places, counted afresh over every kind (the player aside).
    flat = jnp.concatenate([state["orders"][k] for k in SLOTS])
    rank = jnp.argsort(jnp.argsort(jnp.where(flat < 0, jnp.iinfo(jnp.int32).max, flat)))
    start = 0
    for kind, n in SLOTS.items():
        live, pos = _live(c, kind)
        order = rank[start : start + n]
        start += n
        if kind == "plants":
            extra = [jnp.ones(n, jnp.int32), c.growing_plants_age]
        elif kind == "arrows":
            extra = [c.arrow_directions[:, 1], c.arrow_directions[:, 0]]
        else:
            mobs = _mobs_of(c)[kind]
            extra = [mobs.health]
            if kind != "cows":  # Craftax's counter runs below 0; Crafter's stops at 0, ready
                extra.append(jnp.maximum(mobs.attack_cooldown, 0))
        rows = jnp.stack([order, pos[:, 1], pos[:, 0], *extra], axis=1)
        by_place = jnp.argsort(jnp.where(live, order, jnp.iinfo(jnp.int32).max))
        rows = jnp.where(live[by_place][:, None], rows[by_place], 0)
        pad = jnp.zeros((CAPACITY[kind] - n, WIDTH[kind]), jnp.int32)
        ref[kind] = jnp.concatenate([rows.astype(jnp.int32), pad])
        ref[f"{kind}.length"] = live.sum().astype(jnp.int32)
    intrinsics = (c.player_health, c.player_food, c.player_drink, c.player_energy)
    ref |= {f"inventory.{n}": v for n, v in zip(INTRINSICS, intrinsics, strict=True)}
    ref |= {f"inventory.{n}": getattr(c.inventory, n) for n in ITEMS}
    ref |= {f"achievements.{n}": state["counts"][j] for j, n in enumerate(ACHIEVEMENTS)}
    ref |= {f"unlocked.{n}": c.achievements[j] for j, n in enumerate(ACHIEVEMENTS)}
    return ref
