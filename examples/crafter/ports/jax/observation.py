"""Hand-written known-good port: a test subject for the verifier, not model output.

What the agent is shown, as ids (Crafter's SemanticView numbering): the 9x7 cells around
the player, obs[x][y], each its material or the object standing there, 0 off the map; then
the 16 inventory counts."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .world import AREA, STANDING_PLAYER

VIEW = (9, 7)
PLAYER_ID = 13
KIND_ID = jnp.array([15, 16, 14, 17, 18], jnp.int32)  # zombie, skeleton, cow, arrow, plant
SIZE = VIEW[0] * VIEW[1] + 16


def observe(mat, stands, px, py, inventory) -> jax.Array:
    """-> uint8[79] from the material map and the map of what stands on each cell (kind +
    1, or the player). Off the map both read as padding: material 0 and nothing standing."""
    # The view's cells gathered, not sliced from padded maps: a pad copies the whole map.
    xs = px - VIEW[0] // 2 + jnp.arange(VIEW[0])[:, None]
    ys = py - VIEW[1] // 2 + jnp.arange(VIEW[1])[None, :]
    on = (xs >= 0) & (xs < AREA) & (ys >= 0) & (ys < AREA)
    cx, cy = jnp.clip(xs, 0, AREA - 1), jnp.clip(ys, 0, AREA - 1)
    cells = jnp.where(on, mat[cx, cy], 0)
    standing = jnp.where(on, stands[cx, cy], 0).astype(jnp.int32)
    ids = jnp.where(standing == STANDING_PLAYER, PLAYER_ID, KIND_ID[jnp.clip(standing - 1, 0, 4)])
    view = jnp.where(standing > 0, ids, cells)
    return jnp.concatenate([view.ravel(), inventory]).astype(jnp.uint8)
