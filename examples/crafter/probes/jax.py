"""L1 probes for the JAX Crafter port's module functions (harness code, not generated).

`pixels.render`: Crafter's image of a state. `call` runs in the worker, compiled: it hands
the port the State's fields from the state's leaves and the night's noise made from the
state (`_night`, traceable); `expect` renders the same state with Crafter's own renderer,
handed the same noise (harness/image.py). The port lights in float32 where Crafter lights
in float64, so a channel may be one off (a value within float32's rounding of an integer,
truncated to the other side): the image compares as floats within 1
(`[targets.jax.tolerance] image`). A divergence names a pixel, `image[y, x, channel]`.
"""

import importlib
import importlib.util
from pathlib import Path

import numpy as np

from envport.verifiers.draws.probes import probe

KINDS = ("zombies", "skeletons", "cows", "arrows", "plants")
ITEMS = ["health", "food", "drink", "energy", "sapling", "wood", "stone", "coal", "iron"]
ITEMS += ["diamond", "wood_pickaxe", "stone_pickaxe", "iron_pickaxe", "wood_sword"]
ITEMS += ["stone_sword", "iron_sword"]
LOCAL = (63, 49)


def _night(state, xp):
    """Numbers in [32, 127) for the night's noise, a hash of the state's step and place in
    uint32 words (`xp` numpy or jax.numpy, bit for bit alike), each a multiple of 1/64 so
    float32 holds it exactly: the port's float32 and Crafter's float64 read the same."""
    seed = (xp.asarray(state["step"]) * 7919 + xp.sum(xp.asarray(state["player_pos"]))).astype(
        xp.uint32
    )
    k = xp.arange(LOCAL[0] * LOCAL[1], dtype=xp.uint32) * xp.uint32(2654435761)
    k = (k ^ seed) * xp.uint32(2246822519)
    k = (k >> xp.uint32(8)) % xp.uint32(95 * 64)
    return (32 + k.astype(xp.float32) / 64).reshape(LOCAL)


def _image_harness():
    path = Path(__file__).parent.parent / "harness" / "image.py"
    spec = importlib.util.spec_from_file_location("crafter_harness_image", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_HARNESS = []


def _harness():
    if not _HARNESS:
        _HARNESS.append(_image_harness())
    return _HARNESS[0]


@probe("pixels.render")
def render(module, before, action, after, noise):
    import jax.numpy as jnp

    image = module.render(
        before["mat_map"],
        before["player_pos"],
        before["facing"],
        before["sleeping"],
        before["daylight"],
        {kind: before[kind] for kind in KINDS},
        {kind: before[f"{kind}.length"] for kind in KINDS},
        jnp.stack([before[f"inventory.{name}"] for name in ITEMS]),
        _night(before, jnp),
    )
    return {"image": image.astype(jnp.float32)}


@render.expect
def _(before, action, after, transition):
    image = _harness().reference_image(before, _night(before, np).astype(np.float64))
    return {"image": image.astype(np.float32)}


@render.arrange
def _(state, action, pick):
    return _harness().arranged(state, action, pick)
