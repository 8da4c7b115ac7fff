"""Hand-written known-good port: a test subject for the verifier, not model output.

Crafter's image (Env.render at its defaults: 64x64 pixels, a 9x9 view, a unit of 7 pixels):
the 9x7 cells around the player as the map's textures with the objects' drawn over them
through their alpha, lit by the daylight (a noisy, vignetted, colour-reduced and tinted
night image mixed in), greyed while the player sleeps; below it the inventory's icons and
counts on black; placed in the 64x64 canvas (one black row and column) and transposed to
image[y][x]. The textures are Crafter's own PNG files, read from its installed package when
this module loads and resized per size with PIL's nearest neighbour, as Crafter does.

Crafter lights the view in float64 and converts to uint8 by truncation, twice through PIL's
colour enhancement (a blend with the image's luma in PIL's fixed-point and float32
arithmetic): both are carried here in the same order, so the pixels are Crafter's exactly.
The night's noise is an input (`night`): the numbers Crafter's render draws from the
world's generator, which the step's noise does not carry."""

from __future__ import annotations

from importlib.resources import files

import numpy as np
from PIL import Image

from .player import Player
from .world import AREA, ITEMS, NAME, World

SIZE = 64
UNIT = 7  # 64 // 9
GRID = (9, 7)  # the local view's cells; the item view takes the view's last two rows
ITEM_GRID = (9, 2)
LOCAL = (GRID[0] * UNIT, GRID[1] * UNIT)  # 63 x 49 pixels: the shape of `night`
TINT_NIGHT = np.array((0, 16, 64))
TINT_SLEEP = np.array((0, 0, 16))


def _originals() -> dict[str, np.ndarray]:
    """Every PNG of Crafter's assets as Crafter holds it: transposed to [x][y]."""
    found = {}
    for entry in files("crafter").joinpath("assets").iterdir():
        if entry.name.endswith(".png"):
            with entry.open("rb") as stream:
                image = np.array(Image.open(stream))
            found[entry.name[: -len(".png")]] = image.transpose((1, 0, 2))
    return found


ORIGINALS = _originals()


def _resized(name: str, size: int) -> np.ndarray:
    """Textures.get: the asset resized with PIL's nearest neighbour."""
    image = ORIGINALS[name]
    if image.shape[:2] == (size, size):
        return image
    return np.array(Image.fromarray(image).resize((size, size), resample=Image.NEAREST))


# Every texture the image draws, at the sizes it draws them: cells 7, icons 5, counts 4
# (Crafter's 0.8 and 0.6 of the unit, truncated).
CELL = {name: _resized(name, UNIT) for name in ORIGINALS}
ICON = {name: _resized(name, int(0.8 * UNIT)) for name in ITEMS}
COUNT = {str(n): _resized(str(n), int(0.6 * UNIT)) for n in range(1, 10)}
COUNT["unknown"] = _resized("unknown", int(0.6 * UNIT))

ARROW_TEXTURE = {(-1, 0): "arrow-left", (1, 0): "arrow-right", (0, -1): "arrow-up"}
ARROW_TEXTURE[(0, 1)] = "arrow-down"
PLAYER_TEXTURE = {(-1, 0): "player-left", (1, 0): "player-right", (0, -1): "player-up"}
PLAYER_TEXTURE[(0, 1)] = "player-down"
KIND_TEXTURE = {"cows": "cow", "zombies": "zombie", "skeletons": "skeleton"}


def _texture_of(thing, sleeping: bool) -> str:
    if thing.kind == "player":
        return "player-sleep" if sleeping else PLAYER_TEXTURE[tuple(thing.facing)]
    if thing.kind == "arrows":
        return ARROW_TEXTURE[tuple(thing.facing)]
    if thing.kind == "plants":
        return "plant-ripe" if thing.grown > 300 else "plant"
    return KIND_TEXTURE[thing.kind]


def _draw_alpha(canvas: np.ndarray, x: int, y: int, texture: np.ndarray) -> None:
    """engine._draw_alpha: the blend in float32 over [0, 1], truncated back to uint8."""
    w, h = texture.shape[:2]
    if texture.shape[-1] == 4:
        alpha = texture[..., 3:].astype(np.float32) / 255
        colour = texture[..., :3].astype(np.float32) / 255
        current = canvas[x : x + w, y : y + h].astype(np.float32) / 255
        blended = alpha * colour + (1 - alpha) * current
        texture = (255 * blended).astype(np.uint8)
    canvas[x : x + w, y : y + h] = texture


def _colour(image: np.ndarray, factor: float) -> np.ndarray:
    """PIL's ImageEnhance.Color(image).enhance(factor) on uint8 RGB: the luma (PIL's
    RGB -> L, fixed point, rounded) blended toward the image by a float32 factor and
    truncated, as PIL's C code computes it."""
    rgb = image.astype(np.int64)
    luma = (rgb[..., 0] * 19595 + rgb[..., 1] * 38470 + rgb[..., 2] * 7471 + 0x8000) >> 16
    grey = np.repeat(luma[..., None], 3, axis=-1)
    mixed = grey.astype(np.float32) + np.float32(factor) * (rgb - grey).astype(np.float32)
    return mixed.astype(np.uint8)


def _vignette() -> np.ndarray:
    """LocalView._vignette(shape, 0.5): 0 at the view's centre, towards 1 at its corners."""
    xs, ys = np.meshgrid(np.linspace(-1, 1, LOCAL[0]), np.linspace(-1, 1, LOCAL[1]))
    return 1 - np.exp(-0.5 * (xs**2 + ys**2) / (0.5**2)).T


VIGNETTE = _vignette()


def _light(canvas: np.ndarray, daylight: float, night: np.ndarray) -> np.ndarray:
    """LocalView._light in float64: the night's noise only below half daylight."""
    dark = canvas
    if daylight < 0.5:
        mask = 2 * (0.5 - daylight) * VIGNETTE[..., None]
        dark = (1 - mask) * canvas + mask * night[..., None]
    dark = _colour(dark.astype(np.uint8), 0.4)
    dark = (1 - 0.5) * dark + 0.5 * TINT_NIGHT
    return daylight * canvas + (1 - daylight) * dark


def _sleep(canvas: np.ndarray) -> np.ndarray:
    grey = _colour(canvas.astype(np.uint8), 0.0)
    return (1 - 0.5) * grey + 0.5 * TINT_SLEEP


def local_view(world: World, player: Player, daylight: float, night: np.ndarray) -> np.ndarray:
    """LocalView: float64[63, 49, 3], the cells around the player, [x][y]."""
    canvas = np.full((*LOCAL, 3), 127, np.uint8)  # off the map: grey
    px, py = player.pos
    left, top = px - GRID[0] // 2, py - GRID[1] // 2
    for x in range(GRID[0]):
        for y in range(GRID[1]):
            cx, cy = left + x, top + y
            if 0 <= cx < AREA and 0 <= cy < AREA:
                name = NAME.get(int(world.mat[cx, cy]), "unknown")
                canvas[x * UNIT : (x + 1) * UNIT, y * UNIT : (y + 1) * UNIT] = CELL[name][..., :3]
    for thing in world.live():  # the world's list order: later objects drawn on top
        x, y = thing.pos[0] - left, thing.pos[1] - top
        if 0 <= x < GRID[0] and 0 <= y < GRID[1]:
            _draw_alpha(canvas, x * UNIT, y * UNIT, CELL[_texture_of(thing, player.sleeping)])
    lit = _light(canvas, daylight, night)
    return _sleep(lit) if player.sleeping else lit


def item_view(inventory: dict[str, int]) -> np.ndarray:
    """ItemView: uint8[63, 14, 3], each item held (its icon, then its count) on black."""
    canvas = np.zeros((ITEM_GRID[0] * UNIT, ITEM_GRID[1] * UNIT, 3), np.uint8)
    for index, name in enumerate(ITEMS):
        amount = int(inventory[name])
        if amount < 1:
            continue
        col, row = index % ITEM_GRID[0], index // ITEM_GRID[0]
        at = int(col * UNIT + 0.1 * UNIT), int(row * UNIT + 0.1 * UNIT)
        _draw_alpha(canvas, *at, ICON[name])
        at = int(col * UNIT + 0.4 * UNIT), int(row * UNIT + 0.4 * UNIT)
        _draw_alpha(canvas, *at, COUNT[str(amount) if amount < 10 else "unknown"])
    return canvas


def render(world: World, player: Player, daylight: float, night: np.ndarray) -> np.ndarray:
    """Env.render() -> uint8[64, 64, 3], image[y][x]. `night` is float64[63, 49]: the
    numbers Crafter's render draws at night, `world.random.uniform(32, 127, (63, 49))`,
    read only when daylight < 0.5."""
    local = local_view(world, player, float(daylight), np.asarray(night))
    view = np.concatenate([local, item_view(player.inventory)], axis=1)
    canvas = np.zeros((SIZE, SIZE, 3), np.uint8)
    border = (SIZE - UNIT * GRID[0]) // 2
    canvas[border : border + view.shape[0], border : border + view.shape[1]] = view
    return canvas.transpose((1, 0, 2))
