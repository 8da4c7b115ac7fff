"""Hand-written known-good port: a test subject for the verifier, not model output.

Crafter's world generator (worldgen.generate_world) in JAX for one env: OpenSimplex terrain
(simplex.py) gives each cell its material, then each cell may get a cow, a zombie or a
skeleton. The noise has no side effects, so all thirteen of Crafter's noise fields are
computed on the whole map at once, and every cell's material and creature follow from its
own fields and its own uniforms.

Crafter draws its uniforms from one sequential stream: cell by cell (x outer, then y), the
materials' pass first and then the objects', and only on the branches that read one, so a
cell's numbers sit at an offset that depends on every cell before it. Those numbers are
independent and identically distributed, whatever their offsets, so a world made from
numbers drawn per cell (three for a cell's material: coal, iron, diamond; two for its
object: a cow then a zombie, or a zombie then a skeleton), each cell using its first k as
Crafter's cell would draw k, has exactly the distribution of Crafter's worlds. `generate`
also returns how many each cell took: laid end to end in Crafter's order they are the
stream that makes the same world in Crafter's sequential generator.

The port runs in float32 (x64 off). The noise's geometry is the reference's own float64
(simplex.py); its sums are float32, within 2.2e-7 of the reference's float64 noise over
Crafter's points and many seeds. A cell whose field sits within that of a threshold (the
tunnels' 0.4, the mountain's 0.15, ...) can take the other branch, and so can a cell whose
noise is exactly 0 by cancellation (terms summing to 0, left by each precision's rounding a
few 1e-16 or 1e-9 either side: coal's and the trees' `> 0`), the reference's side and the
port's each a fair coin there (over 300 seeds, 2,497 and 2,485 of 4,874 such tree points
above 0). Fed the same numbers, the port and Crafter's generator make different worlds in
about 7 worlds of 100, one cell differing at first (a creature's cell where a cell's count
of draws changes, then what follows it): a difference of either sign, of rate far below
what 300 worlds, or thousands, could tell from Crafter's. The uniforms are float32 too: a
threshold like 0.993 is read as its float32 neighbour (3e-8 away), a change in each
chance of the same order."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .simplex import Geometry, noise3, permutation
from .world import (
    AREA,
    COAL,
    COW,
    DIAMOND,
    GRASS,
    IRON,
    LAVA,
    PATH,
    SAND,
    SKELETON,
    STONE,
    TREE,
    WATER,
    ZOMBIE,
)

START = (AREA // 2, AREA // 2)
SEED_HIGH = 2**31 - 1  # the simplex seed is randint(0, 2**31 - 1)
MATERIAL_DRAWS, OBJECT_DRAWS = 3, 2  # the most a cell draws in each pass
NOTHING = -1  # a cell without a creature

# The noise fields Crafter reads, each as (x scale, y scale, z, its size): a cell (x, y)
# reads noise3(x' / size, y' / size, z) with x' = x * scale (a negative scale divides by
# it, as Crafter's tunnels pass `y / 5`).
FIELDS = {
    "start": (1, 1, 8, 3),
    "water_wide": (1, 1, 3, 15),
    "water_fine": (1, 1, 3, 5),
    "mountain_wide": (1, 1, 0, 15),
    "mountain_fine": (1, 1, 0, 5),
    "cave": (1, 1, 6, 7),
    "tunnel_across": (2, -5, 7, 3),
    "tunnel_down": (-5, 2, 7, 3),
    "coal": (1, 1, 1, 8),
    "iron": (1, 1, 2, 6),
    "lava": (1, 1, 6, 5),
    "sand": (1, 1, 4, 9),
    "tree": (1, 1, 5, 7),
}


def _points() -> Geometry:
    """Every field's points over the map (field after field, x outer), each coordinate
    computed as Crafter computes it in float64."""
    x, y = (v.ravel() for v in np.meshgrid(np.arange(AREA), np.arange(AREA), indexing="ij"))
    xs, ys, zs = [], [], []
    for sx, sy, z, size in FIELDS.values():
        xs.append((x * sx if sx > 0 else x / -sx) / size)
        ys.append((y * sy if sy > 0 else y / -sy) / size)
        zs.append(np.full(AREA * AREA, float(z)))
    return Geometry(np.concatenate(xs), np.concatenate(ys), np.concatenate(zs))


# The same points in every world: their lattice points and weighted offsets, made once and
# laid out field by field ([field, term, axis, cell]) here, not in the traced program.
POINTS = _points()
PER_FIELD = tuple(
    np.ascontiguousarray(np.moveaxis(v.reshape(*v.shape[:2], len(FIELDS), AREA * AREA), 2, 0))
    for v in (POINTS.at, POINTS.weighted)
)


def fields(simplex_seed) -> dict[str, jax.Array]:
    """Crafter's noise fields for a simplex seed, each float32[AREA, AREA]: one field at a
    time (lax.map), so a vmap over thousands of worlds holds one field's numbers at once."""
    perm = permutation(simplex_seed)
    at, weighted = (jnp.asarray(v) for v in PER_FIELD)
    values = jax.lax.map(lambda field: noise3(perm, *field), (at, weighted))
    values = values.reshape(len(FIELDS), AREA, AREA)
    return {name: values[i] for i, name in enumerate(FIELDS)}


def _pick(u: jax.Array, index: jax.Array) -> jax.Array:
    """Each cell's number at its own index (how many it has drawn so far)."""
    return jnp.take_along_axis(u, index[..., None], axis=-1)[..., 0]


def materials(n: dict[str, jax.Array], u: jax.Array):
    """The materials' pass, `u` float32[AREA, AREA, 3] each cell's numbers in the order it
    draws them. -> (material ids int32[AREA, AREA], tunnel cells, numbers each cell took)."""
    x, y = jnp.meshgrid(jnp.arange(AREA), jnp.arange(AREA), indexing="ij")
    # Crafter's sums, term by term.
    start = 4 - jnp.sqrt(((x - START[0]) ** 2 + (y - START[1]) ** 2).astype(jnp.float32))
    start = jax.nn.sigmoid(start + 2 * n["start"])
    water = n["water_wide"] + 0.15 * n["water_fine"] + 0.1 - 2 * start
    mountain = (n["mountain_wide"] + 0.3 * n["mountain_fine"]) / 1.3
    mountain = mountain - (4 * start + 0.3 * water)
    grass = start > 0.5
    hills = ~grass & (mountain > 0.15)
    low = ~grass & ~hills

    cave = hills & (n["cave"] > 0.15) & (mountain > 0.3)
    tunnels = hills & ~cave & ((n["tunnel_across"] > 0.4) | (n["tunnel_down"] > 0.4))
    rock = hills & ~cave & ~tunnels
    sand = low & (water > 0.25) & (water <= 0.35) & (n["sand"] > -0.2)
    lake = low & ~sand & (water > 0.3)
    meadow = low & ~sand & ~lake

    # A rock cell draws for coal where the coal noise is positive, then (coal not drawn)
    # for iron where the iron noise passes 0.4, then for a diamond deep in the mountains;
    # each draw is the cell's next number.
    coal_noise, iron_noise, deep = n["coal"] > 0, n["iron"] > 0.4, mountain > 0.18
    coal = rock & coal_noise & (u[..., 0] > 0.85)
    drawn = (rock & coal_noise).astype(jnp.int32)
    iron = rock & ~coal & iron_noise & (_pick(u, drawn) > 0.75)
    drawn = drawn + (rock & ~coal & iron_noise)
    diamond = rock & ~coal & ~iron & deep & (_pick(u, drawn) > 0.994)
    drawn = drawn + (rock & ~coal & ~iron & deep)
    lava = rock & ~coal & ~iron & ~diamond & (mountain > 0.3) & (n["lava"] > 0.35)
    tree_noise = meadow & (n["tree"] > 0)
    tree = tree_noise & (u[..., 0] > 0.8)
    drawn = drawn + tree_noise

    mat = jnp.select(
        [grass, cave | tunnels, coal, iron, diamond, lava, rock, sand, lake, tree],
        [GRASS, PATH, COAL, IRON, DIAMOND, LAVA, STONE, SAND, WATER, TREE],
        GRASS,
    )
    return mat.astype(jnp.int32), tunnels, drawn


def creatures(mat: jax.Array, tunnels: jax.Array, u: jax.Array):
    """The objects' pass, `u` float32[AREA, AREA, 2]. -> (each cell's creature: ZOMBIE,
    SKELETON, COW or NOTHING, int32[AREA, AREA]; numbers each cell took)."""
    x, y = jnp.meshgrid(jnp.arange(AREA), jnp.arange(AREA), indexing="ij")
    # Squared distances: a correctly rounded square root is above 3 (10) exactly when
    # its integer square is above 9 (100).
    far = (x - START[0]) ** 2 + (y - START[1]) ** 2
    walkable = (mat == GRASS) | (mat == SAND) | (mat == PATH)
    cow_draws = walkable & (mat == GRASS) & (far > 9)
    cow = cow_draws & (u[..., 0] > 0.985)
    drawn = cow_draws.astype(jnp.int32)
    zombie_draws = walkable & ~cow & (far > 100)
    zombie = zombie_draws & (_pick(u, drawn) > 0.993)
    drawn = drawn + zombie_draws
    skeleton_draws = walkable & ~cow & ~zombie & (mat == PATH) & tunnels
    skeleton = skeleton_draws & (_pick(u, drawn) > 0.95)
    drawn = drawn + skeleton_draws
    kind = jnp.select([cow, zombie, skeleton], [COW, ZOMBIE, SKELETON], NOTHING)
    return kind.astype(jnp.int32), drawn


def draw(key: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
    """A world's numbers: (simplex seed, the materials' float32[AREA, AREA, 3], the
    objects' float32[AREA, AREA, 2])."""
    seed_key, material_key, object_key = jax.random.split(key, 3)
    seed = jax.random.randint(seed_key, (), 0, SEED_HIGH, jnp.int32)
    u_mat = jax.random.uniform(material_key, (AREA, AREA, MATERIAL_DRAWS))
    return seed, u_mat, jax.random.uniform(object_key, (AREA, AREA, OBJECT_DRAWS))


def generate(simplex_seed, u_mat: jax.Array, u_obj: jax.Array):
    """Crafter's world for a simplex seed and each cell's numbers. -> (material ids
    int32[AREA, AREA], creatures int32[AREA, AREA], the numbers each cell took in the
    materials' pass and in the objects' pass, int32[AREA, AREA] each)."""
    mat, tunnels, mat_drawn = materials(fields(simplex_seed), u_mat)
    kind, obj_drawn = creatures(mat, tunnels, u_obj)
    return mat, kind, mat_drawn, obj_drawn
