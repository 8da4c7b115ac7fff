"""Hand-written known-good port: a test subject for the verifier, not model output.

What the agent is shown, as ids (Crafter's SemanticView numbering): the 9x7 cells around
the player, obs[x][y], each its material or the object standing there, 0 off the map; then
the 16 inventory counts."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .world import PLAYER

VIEW = (9, 7)
PLAYER_ID = 13
KIND_ID = jnp.array([15, 16, 14, 17, 18], jnp.int32)  # zombie, skeleton, cow, arrow, plant
SIZE = VIEW[0] * VIEW[1] + 16


def observe(mat, omap, kind, px, py, inventory) -> jax.Array:
    """-> uint8[79] from the material map, the map of slots and each slot's kind. Off the
    map both maps read as padding: material 0 and no object."""
    hx, hy = VIEW[0] // 2, VIEW[1] // 2
    start = (px, py)
    cells = jax.lax.dynamic_slice(jnp.pad(mat, ((hx, hx), (hy, hy))), start, VIEW)
    codes = jax.lax.dynamic_slice(jnp.pad(omap, ((hx, hx), (hy, hy))), start, VIEW)
    slot = jnp.clip(codes - 1, 0, kind.shape[0] - 1)
    ids = jnp.where(codes == PLAYER, PLAYER_ID, KIND_ID[jnp.clip(kind[slot], 0, 4)])
    view = jnp.where(codes > 0, ids, cells)
    return jnp.concatenate([view.ravel(), inventory]).astype(jnp.uint8)
