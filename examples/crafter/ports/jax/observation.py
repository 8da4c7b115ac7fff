"""Hand-written known-good port: a test subject for the verifier, not model output.

What the agent is shown, as ids (Crafter's SemanticView numbering): the 9x7 cells around
the player, obs[x][y], each its material or the object standing there, 0 off the map; then
the 16 inventory counts."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .world import AREA, KINDS

VIEW = (9, 7)
PLAYER_ID = 13
KIND_ID = jnp.array([15, 16, 14, 17, 18], jnp.int32)  # zombie, skeleton, cow, arrow, plant
SIZE = VIEW[0] * VIEW[1] + 16


def observe(mat, kind, x, y, alive, px, py, inventory) -> jax.Array:
    """-> uint8[79] from the material map and the objects' table (kind, x, y, alive [slots]).
    Off the map, material 0. The objects in view are written into its 63 cells: a map of
    the whole world per env would be a pass over a batch's memory for 63 cells."""
    # The view's cells gathered, not sliced from padded maps: a pad copies the whole map.
    xs = px - VIEW[0] // 2 + jnp.arange(VIEW[0])[:, None]
    ys = py - VIEW[1] // 2 + jnp.arange(VIEW[1])[None, :]
    on = (xs >= 0) & (xs < AREA) & (ys >= 0) & (ys < AREA)
    cx, cy = jnp.clip(xs, 0, AREA - 1), jnp.clip(ys, 0, AREA - 1)
    cells = jnp.where(on, mat[cx, cy], 0).ravel()
    dx, dy = x - xs[0, 0], y - ys[0, 0]
    seen = alive & (dx >= 0) & (dx < VIEW[0]) & (dy >= 0) & (dy < VIEW[1])
    cell = jnp.where(seen, dx * VIEW[1] + dy, VIEW[0] * VIEW[1])
    ids = jnp.zeros(VIEW[0] * VIEW[1], jnp.int32)
    ids = ids.at[cell].set(KIND_ID[jnp.clip(kind, 0, len(KINDS) - 1)], mode="drop")
    ids = ids.at[(VIEW[0] // 2) * VIEW[1] + VIEW[1] // 2].set(PLAYER_ID)
    view = jnp.where(ids > 0, ids, cells)
    return jnp.concatenate([view, inventory]).astype(jnp.uint8)
