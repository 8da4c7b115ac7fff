"""Hand-written known-good port: a test subject for the verifier, not model output.

Crafter's world generator (worldgen.generate_world): OpenSimplex terrain (simplex.py) gives
each cell its material, then each cell may get a cow, a zombie or a skeleton. The noise has
no side effects, so every field of it is computed for the whole map at once; only the
uniform draws are sequential: Crafter draws them cell by cell (x outer, then y), the
materials' pass first and then the objects', and only on the branches that evaluate one,
so the cells that may draw are walked in that order and each draws as Crafter's would."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .simplex import Simplex
from .world import AREA, ID

START = (AREA // 2, AREA // 2)
SEED_HIGH = 2**31 - 1  # the simplex seed is randint(0, 2**31 - 1)
# The most uniforms a world can draw: three a cell for its material (coal, iron, diamond),
# two for its object (a cow then a zombie, or a zombie then a skeleton).
MOST_DRAWS = 5 * AREA * AREA

# The fields every cell's material needs (the rest only some cells').
BROAD = ("start", "water", "mountain")
# The noise fields Crafter reads, each as (x scale, y scale, z, its size): a cell (x, y)
# reads noise3(x' / size, y' / size, z) with x' = x * scale (a negative scale divides by
# it, as Crafter's tunnels pass `y / 5`), in Crafter's order of operations.
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


def _coordinate(v: np.ndarray, scale: int) -> np.ndarray:
    return v * scale if scale > 0 else v / -scale


GRID = np.meshgrid(np.arange(AREA), np.arange(AREA), indexing="ij")


class Noise:
    """Crafter's noise fields for one simplex seed, each read only on the cells whose
    material depends on it (about 30,000 points a world instead of 13 x 4,096)."""

    def __init__(self, simplex_seed: int) -> None:
        self.simplex = Simplex(simplex_seed)

    def fields(self, wanted: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Each named field on the cells of its mask (NaN elsewhere, so any comparison
        there is false), all in one call of the noise."""
        x, y = GRID
        xs, ys, zs = [], [], []
        for name, cells in wanted.items():
            sx, sy, z, size = FIELDS[name]
            xs.append(_coordinate(x[cells], sx) / size)
            ys.append(_coordinate(y[cells], sy) / size)
            zs.append(np.full(int(cells.sum()), float(z)))
        values = self.simplex.noise3(np.concatenate(xs), np.concatenate(ys), np.concatenate(zs))
        found, at = {}, 0
        for name, cells in wanted.items():
            field = np.full((AREA, AREA), np.nan)
            count = int(cells.sum())
            field[cells] = values[at : at + count]
            found[name], at = field, at + count
        return found


def materials(noise: Noise, uniform: Callable[[], float]):
    """The materials' pass: (material ids [AREA, AREA], tunnel cells [AREA, AREA])."""
    x, y = GRID
    everywhere = np.ones((AREA, AREA), bool)
    n = noise.fields({name: everywhere for name in FIELDS if name.split("_")[0] in BROAD})
    # Crafter's sums, term by term (a weight of 1 and a start of 0 leave a value as it is).
    start = 4 - np.sqrt((x - START[0]) ** 2 + (y - START[1]) ** 2)
    start = start + 2 * n["start"]
    start = 1 / (1 + np.exp(-start))
    water = n["water_wide"] + 0.15 * n["water_fine"] + 0.1
    water = water - 2 * start
    # Crafter divides by the weights' sum as Python adds it (1 + 0.3, which rounds to 1.3).
    mountain = (n["mountain_wide"] + 0.3 * n["mountain_fine"]) / (1 + 0.3)
    mountain = mountain - (4 * start + 0.3 * water)
    grass = start > 0.5
    hills = ~grass & (mountain > 0.15)
    low = ~grass & ~hills
    # The fields the rest reads, where they can decide: the hills' in the hills, sand's
    # where the water is sand's, trees' where it is too shallow for a lake.
    shore, dry = low & (water > 0.25) & (water <= 0.35), low & ~(water > 0.3)
    rocky = dict.fromkeys(("cave", "tunnel_across", "tunnel_down", "coal", "iron", "lava"), hills)
    n = noise.fields({**rocky, "sand": shore, "tree": dry})

    cave = hills & (n["cave"] > 0.15) & (mountain > 0.3)
    tunnels = hills & ~cave & ((n["tunnel_across"] > 0.4) | (n["tunnel_down"] > 0.4))
    rock = hills & ~cave & ~tunnels
    sand = low & (water > 0.25) & (water <= 0.35) & (n["sand"] > -0.2)
    lake = low & ~sand & (water > 0.3)
    meadow = low & ~sand & ~lake

    mat = np.full((AREA, AREA), ID["grass"], np.int64)
    mat[cave | tunnels] = ID["path"]
    mat[sand] = ID["sand"]
    mat[lake] = ID["water"]
    # Rock the draws leave alone is lava or stone.
    lava = rock & (mountain > 0.3) & (n["lava"] > 0.35)
    mat[rock] = np.where(lava[rock], ID["lava"], ID["stone"])

    coal, iron, deep = n["coal"] > 0, n["iron"] > 0.4, mountain > 0.18
    trees = meadow & (n["tree"] > 0)
    drawing = (rock & (coal | iron | deep)) | trees
    flat = mat.reshape(-1)
    coal_l, iron_l, deep_l = coal.ravel().tolist(), iron.ravel().tolist(), deep.ravel().tolist()
    rock_l = rock.ravel().tolist()
    for i in np.flatnonzero(drawing.ravel()).tolist():
        if not rock_l[i]:
            if uniform() > 0.8:
                flat[i] = ID["tree"]
        elif coal_l[i] and uniform() > 0.85:
            flat[i] = ID["coal"]
        elif iron_l[i] and uniform() > 0.75:
            flat[i] = ID["iron"]
        elif deep_l[i] and uniform() > 0.994:
            flat[i] = ID["diamond"]
    return mat, tunnels


def creatures(mat: np.ndarray, tunnels: np.ndarray, uniform: Callable[[], float]):
    """The objects' pass: [(kind, (x, y))] in the order Crafter adds them."""
    x, y = GRID
    # Squared distances: a correctly rounded square root is above 3 (10) exactly when
    # its integer square is above 9 (100).
    far = (x - START[0]) ** 2 + (y - START[1]) ** 2
    grass, path = mat == ID["grass"], mat == ID["path"]
    walkable = grass | path | (mat == ID["sand"])
    cow_ok, zombie_ok, skeleton_ok = grass & (far > 9), far > 100, path & tunnels
    drawing = walkable & (cow_ok | zombie_ok | skeleton_ok)
    cow_l, zombie_l = cow_ok.ravel().tolist(), zombie_ok.ravel().tolist()
    skeleton_l = skeleton_ok.ravel().tolist()
    made = []
    for i in np.flatnonzero(drawing.ravel()).tolist():
        pos = divmod(i, AREA)
        if cow_l[i] and uniform() > 0.985:
            made.append(("cows", pos))
        elif zombie_l[i] and uniform() > 0.993:
            made.append(("zombies", pos))
        elif skeleton_l[i] and uniform() > 0.95:
            made.append(("skeletons", pos))
    return made


def generate(simplex_seed: int, uniform: Callable[[], float]):
    """Crafter's world for a simplex seed and a source of uniforms over [0, 1) drawn in
    Crafter's order: (material ids int64[AREA, AREA], [(kind, (x, y))] in the order the
    world adds them, the player's start)."""
    mat, tunnels = materials(Noise(simplex_seed), uniform)
    return mat, creatures(mat, tunnels, uniform), START
