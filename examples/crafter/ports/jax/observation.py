"""Hand-written known-good port: a test subject for the verifier, not model output.

What the agent is shown, as ids (Crafter's SemanticView numbering): the 9x7 cells around
the player, obs[x][y], each its material or the object standing there, 0 off the map; then
the 16 inventory counts."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .world import AREA, PLAYER

VIEW = (9, 7)
PLAYER_ID = 13
KIND_ID = jnp.array([15, 16, 14, 17, 18], jnp.int32)  # zombie, skeleton, cow, arrow, plant
SIZE = VIEW[0] * VIEW[1] + 16


def observe(mat, omap, kind, px, py, inventory) -> jax.Array:
    """-> uint8[79] from the material map, the map of slots and each slot's kind. Off the
    map both maps read as padding: material 0 and no object."""
    # The view's cells gathered, not sliced from padded maps: a pad copies the whole map.
    xs = px - VIEW[0] // 2 + jnp.arange(VIEW[0])[:, None]
    ys = py - VIEW[1] // 2 + jnp.arange(VIEW[1])[None, :]
    on = (xs >= 0) & (xs < AREA) & (ys >= 0) & (ys < AREA)
    cx, cy = jnp.clip(xs, 0, AREA - 1), jnp.clip(ys, 0, AREA - 1)
    cells, codes = jnp.where(on, mat[cx, cy], 0), jnp.where(on, omap[cx, cy], 0)
    slot = jnp.clip(codes - 1, 0, kind.shape[0] - 1)
    ids = jnp.where(codes == PLAYER, PLAYER_ID, KIND_ID[jnp.clip(kind[slot], 0, 4)])
    view = jnp.where(codes > 0, ids, cells)
    return jnp.concatenate([view.ravel(), inventory]).astype(jnp.uint8)
