"""Hand-written known-good port: a test subject for the verifier, not model output.

Crafter's image (Env.render at its defaults: 64x64 pixels, a 9x9 view, a unit of 7 pixels)
for one env, jit-able and vmap-able: the 9x7 cells around the player as the map's textures
with the objects' drawn over them through their alpha, lit by the daylight (a noisy,
vignetted, colour-reduced and tinted night image mixed in), greyed while the player sleeps;
below it the inventory's icons and counts on black; placed in the 64x64 canvas (one black
row and column) and transposed to image[y][x]. The textures are Crafter's own PNG files,
read from its installed package when this module loads and resized with PIL's nearest
neighbour as Crafter does, then held as arrays.

Crafter lights the view in float64; this port does in float32 (the daylight itself is
float32 here), so where Crafter's value lies within float32's rounding of an integer the
truncation to uint8 may land one below or above: a channel may be off by one. The texture
blends (float32 in Crafter too) and PIL's colour enhancement (its fixed-point luma and
float32 blend) are exact. Each cell holds at most one object, so the objects are drawn by
cell, not in list order."""

from __future__ import annotations

from importlib.resources import files

import jax
import jax.numpy as jnp
import numpy as np
from PIL import Image

from .world import AREA, ITEMS

SIZE = 64
UNIT = 7  # 64 // 9
GRID = (9, 7)  # the local view's cells; the item view takes the view's last two rows
ITEM_COLUMNS = 9
LOCAL = (GRID[0] * UNIT, GRID[1] * UNIT)  # 63 x 49 pixels: the shape of `night`
MATERIAL_NAMES = ["unknown", "water", "grass", "stone", "path", "sand", "tree", "lava"]
MATERIAL_NAMES += ["coal", "iron", "diamond", "table", "furnace"]
OFF_MAP = len(MATERIAL_NAMES)  # a grey tile
# Object textures: the player's four facings (by DIRECTION below), asleep, then the kinds.
OBJECT_NAMES = ["player-left", "player-right", "player-up", "player-down", "player-sleep"]
OBJECT_NAMES += ["zombie", "skeleton", "cow", "arrow-left", "arrow-right", "arrow-up"]
OBJECT_NAMES += ["arrow-down", "plant", "plant-ripe"]
PLAYER_SLEEP, ZOMBIE_T, SKELETON_T, COW_T, ARROW_T, PLANT_T = 4, 5, 6, 7, 8, 12
KIND_NAMES = ("zombies", "skeletons", "cows", "arrows", "plants")


def _originals() -> dict[str, np.ndarray]:
    """Every PNG of Crafter's assets as Crafter holds it: transposed to [x][y]."""
    found = {}
    for entry in files("crafter").joinpath("assets").iterdir():
        if entry.name.endswith(".png"):
            with entry.open("rb") as stream:
                image = np.array(Image.open(stream))
            found[entry.name[: -len(".png")]] = image.transpose((1, 0, 2))
    return found


def _resized(image: np.ndarray, size: int) -> np.ndarray:
    """Textures.get's resize (PIL, nearest), as RGBA: an opaque texture's alpha 255."""
    if image.shape[:2] != (size, size):
        image = np.array(Image.fromarray(image).resize((size, size), resample=Image.NEAREST))
    if image.shape[-1] == 3:
        image = np.concatenate([image, np.full((size, size, 1), 255, np.uint8)], axis=-1)
    return image


def _stack(originals: dict[str, np.ndarray], names: list[str], size: int):
    textures = np.stack([_resized(originals[n], size) for n in names])
    # Crafter's _draw_alpha blends only a texture with an alpha channel; one without is copied.
    blended = np.array([originals[n].shape[-1] == 4 for n in names])
    return jnp.asarray(textures), jnp.asarray(blended)


_ORIGINALS = _originals()
_GREY = np.full((UNIT, UNIT, 3), 127, np.uint8)
MATERIAL_TILES = jnp.asarray(
    np.stack([_resized(_ORIGINALS[n], UNIT)[..., :3] for n in MATERIAL_NAMES] + [_GREY])
)
OBJECT_TILES, OBJECT_BLENDED = _stack(_ORIGINALS, OBJECT_NAMES, UNIT)
ICONS, ICONS_BLENDED = _stack(_ORIGINALS, ITEMS, int(0.8 * UNIT))
# Counts 1..9 (an item's count is kept within 9); index 0 unused.
COUNTS, COUNTS_BLENDED = _stack(_ORIGINALS, ["unknown"] + [str(n) for n in range(1, 10)], 4)


def _vignette() -> np.ndarray:
    """LocalView._vignette(shape, 0.5): 0 at the view's centre, towards 1 at its corners."""
    xs, ys = np.meshgrid(np.linspace(-1, 1, LOCAL[0]), np.linspace(-1, 1, LOCAL[1]))
    return 1 - np.exp(-0.5 * (xs**2 + ys**2) / (0.5**2)).T


VIGNETTE = jnp.asarray(_vignette(), jnp.float32)
TINT_NIGHT = jnp.array([0, 16, 64], jnp.float32)
TINT_SLEEP = jnp.array([0, 0, 16], jnp.float32)


def _facing_index(fx, fy):
    """(dx, dy) -> 0 left, 1 right, 2 up, 3 down."""
    return jnp.where(fx < 0, 0, jnp.where(fx > 0, 1, jnp.where(fy < 0, 2, 3)))


def _blend(current, texture, blended):
    """engine._draw_alpha on uint8 tiles: in float32 over [0, 1], truncated to uint8."""
    alpha = texture[..., 3:].astype(jnp.float32) / 255
    colour = texture[..., :3].astype(jnp.float32) / 255
    under = current.astype(jnp.float32) / 255
    mixed = (255 * (alpha * colour + (1 - alpha) * under)).astype(jnp.uint8)
    return jnp.where(blended, mixed, texture[..., :3])


def _colour(image, factor: float):
    """PIL's ImageEnhance.Color(image).enhance(factor) on uint8 RGB: the fixed-point luma
    blended toward the image by a float32 factor, truncated."""
    rgb = image.astype(jnp.int32)
    luma = (rgb[..., 0] * 19595 + rgb[..., 1] * 38470 + rgb[..., 2] * 7471 + 0x8000) >> 16
    grey = luma[..., None].astype(jnp.float32)
    return (grey + jnp.float32(factor) * (rgb.astype(jnp.float32) - grey)).astype(jnp.uint8)


def _object_grid(player_pos, facing, sleeping, lists, lengths):
    """int32[9 * 7]: each view cell's object texture, -1 for none."""
    left, top = player_pos[0] - GRID[0] // 2, player_pos[1] - GRID[1] // 2
    grid = jnp.full(GRID[0] * GRID[1], -1, jnp.int32)
    player = jnp.where(sleeping, PLAYER_SLEEP, _facing_index(facing[0], facing[1]))
    grid = grid.at[(GRID[0] // 2) * GRID[1] + GRID[1] // 2].set(player)
    for kind in KIND_NAMES:
        records = lists[kind]
        x, y = records[:, 1] - left, records[:, 2] - top
        live = jnp.arange(records.shape[0]) < lengths[kind]
        inside = live & (x >= 0) & (x < GRID[0]) & (y >= 0) & (y < GRID[1])
        if kind == "zombies":
            texture = jnp.full(records.shape[0], ZOMBIE_T)
        elif kind == "skeletons":
            texture = jnp.full(records.shape[0], SKELETON_T)
        elif kind == "cows":
            texture = jnp.full(records.shape[0], COW_T)
        elif kind == "arrows":
            texture = ARROW_T + _facing_index(records[:, 3], records[:, 4])
        else:
            texture = PLANT_T + (records[:, 4] > 300).astype(jnp.int32)
        cell = jnp.where(inside, x * GRID[1] + y, GRID[0] * GRID[1])  # off the view: dropped
        grid = grid.at[cell].set(texture.astype(jnp.int32), mode="drop")
    return grid


def local_view(mat_map, player_pos, facing, sleeping, daylight, lists, lengths, night):
    """LocalView: float32[63, 49, 3], the cells around the player, [x][y]."""
    xs = player_pos[0] - GRID[0] // 2 + jnp.arange(GRID[0])[:, None]
    ys = player_pos[1] - GRID[1] // 2 + jnp.arange(GRID[1])[None, :]
    on = (xs >= 0) & (xs < AREA) & (ys >= 0) & (ys < AREA)
    cells = mat_map[jnp.clip(xs, 0, AREA - 1), jnp.clip(ys, 0, AREA - 1)]
    tiles = MATERIAL_TILES[jnp.where(on, jnp.clip(cells, 0, OFF_MAP - 1), OFF_MAP)]
    tiles = tiles.reshape(GRID[0] * GRID[1], UNIT, UNIT, 3)
    grid = _object_grid(player_pos, facing, sleeping, lists, lengths)
    index = jnp.clip(grid, 0, len(OBJECT_NAMES) - 1)
    drawn = _blend(tiles, OBJECT_TILES[index], OBJECT_BLENDED[index][:, None, None, None])
    tiles = jnp.where((grid >= 0)[:, None, None, None], drawn, tiles)
    canvas = tiles.reshape(GRID[0], GRID[1], UNIT, UNIT, 3).transpose(0, 2, 1, 3, 4)
    canvas = canvas.reshape(LOCAL[0], LOCAL[1], 3).astype(jnp.float32)
    # LocalView._light: below half daylight, the night's noise under the vignette.
    mask = (2 * (0.5 - daylight) * VIGNETTE)[..., None]
    noisy = (1 - mask) * canvas + mask * night[..., None]
    dark = jnp.where(daylight < 0.5, noisy, canvas)
    dark = _colour(dark.astype(jnp.uint8), 0.4).astype(jnp.float32)
    dark = (1 - 0.5) * dark + 0.5 * TINT_NIGHT
    lit = daylight * canvas + (1 - daylight) * dark
    asleep = (1 - 0.5) * _colour(lit.astype(jnp.uint8), 0.0).astype(jnp.float32)
    asleep = asleep + 0.5 * TINT_SLEEP
    return jnp.where(sleeping, asleep, lit)


def item_view(inventory):
    """ItemView: uint8[63, 14, 3], each item held (its icon, then its count) on black."""
    canvas = jnp.zeros((ITEM_COLUMNS * UNIT, 2 * UNIT, 3), jnp.uint8)
    for index in range(len(ITEMS)):
        amount = inventory[index]
        col, row = index % ITEM_COLUMNS, index // ITEM_COLUMNS
        for offset, textures, blended, which in (
            (0.1, ICONS, ICONS_BLENDED, index),
            (0.4, COUNTS, COUNTS_BLENDED, jnp.clip(amount, 0, 9)),
        ):
            texture = textures[which]
            w = texture.shape[0]
            x, y = int(col * UNIT + offset * UNIT), int(row * UNIT + offset * UNIT)
            under = canvas[x : x + w, y : y + w]
            drawn = _blend(under, texture, blended[which])
            canvas = canvas.at[x : x + w, y : y + w].set(jnp.where(amount >= 1, drawn, under))
    return canvas


def render(
    mat_map, player_pos, facing, sleeping, daylight, lists, lengths, inventory, night
) -> jax.Array:
    """Env.render() -> uint8[64, 64, 3], image[y][x], from the State's fields (lists and
    lengths by kind, as the State holds them). `night` is float32[63, 49]: the numbers
    Crafter's render draws at night, `world.random.uniform(32, 127, (63, 49))`, read only
    when daylight < 0.5."""
    daylight = jnp.asarray(daylight, jnp.float32)
    local = local_view(mat_map, player_pos, facing, sleeping, daylight, lists, lengths, night)
    view = jnp.concatenate([local, item_view(inventory).astype(jnp.float32)], axis=1)
    border = (SIZE - UNIT * GRID[0]) // 2
    canvas = jnp.zeros((SIZE, SIZE, 3), jnp.uint8)
    canvas = jax.lax.dynamic_update_slice(canvas, view.astype(jnp.uint8), (border, border, 0))
    return canvas.transpose((1, 0, 2))
